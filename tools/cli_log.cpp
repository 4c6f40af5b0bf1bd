#include "tools/cli_log.hpp"

#include <spdlog/sinks/ansicolor_sink.h>
#include <spdlog/spdlog.h>

#include <memory>

namespace stepsim::cli {
namespace {

spdlog::level::level_enum spdlog_level(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::debug: return spdlog::level::debug;
    case config::LogLevel::info: return spdlog::level::info;
    case config::LogLevel::warn: return spdlog::level::warn;
  }
  return spdlog::level::warn;
}

config::LogLevel threshold_of(spdlog::level::level_enum level) {
  if (level <= spdlog::level::debug) return config::LogLevel::debug;
  if (level == spdlog::level::info) return config::LogLevel::info;
  return config::LogLevel::warn;
}

}  // namespace

// Logs go to stderr so that stdout carries only results.
void set_up_logging(spdlog::level::level_enum level) {
  auto logger = std::make_shared<spdlog::logger>("stepsim", std::make_shared<spdlog::sinks::ansicolor_stderr_sink_mt>());
  logger->set_pattern("stepsim: %l: %v");
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

config::Log cli_log() {
  const auto level = spdlog::default_logger()->level();
  config::Log log;
  // Above warnings (-q) the layers have nothing to say: an empty sink skips even the wants() checks.
  if (level > spdlog::level::warn) return log;
  log.threshold = threshold_of(level);
  log.sink = [](config::LogLevel l, const std::string& message) { spdlog::log(spdlog_level(l), message); };
  return log;
}

void warn_unmodelled(const models::ModelSpec& model) {
  const config::Log log = cli_log();
  for (const auto& note : model.unmodelled) log.warn(note);
}

void warn_unmodelled(const plan::Scenario& scenario) {
  warn_unmodelled(scenario.model);
  const config::Log log = cli_log();
  for (const auto& strategy : scenario.strategies)
    for (const auto& note : strategy.unmodelled) log.warn(note);
}

}  // namespace stepsim::cli
