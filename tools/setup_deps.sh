# Sourced by tools/demo and tools/check: makes sure the Debian packages stepsim needs are there.
# As root it installs what is missing with apt-get; otherwise it prints exactly what to install.
# libopenmpi-dev and openmpi-bin: `mpirun -n N stepsim sweep` (optional at build time; the setup installs it).
stepsim_packages="g++ cmake make libboost-graph-dev libboost-program-options-dev libyaml-cpp-dev libspdlog-dev doctest-dev zlib1g-dev libtomlplusplus-dev libopenmpi-dev openmpi-bin"

stepsim_setup_deps() {
  local missing=""
  for p in $stepsim_packages "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "stepsim: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq $missing >&2 || {
      echo "stepsim: apt-get install failed for:$missing" >&2; return 1; }
  else
    echo "stepsim: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get install -y$missing" >&2
    return 1
  fi
}
