// A growable array of trivially copyable records that grows with realloc.
//
// The task graph of a large plan (engine_state.hpp) and its record (sim/plan's TaskRecorder) are
// arrays of hundreds of MB built by push_back. A std::vector grows by allocating twice the size,
// copying, and freeing the old block, so each doubling touches old and new pages alike; glibc's
// realloc of a block that large (mmap-backed) moves its pages with mremap instead (man 2 mremap),
// without copying or faulting them in again. Only for types a memcpy may move.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace stepsim::core {

template <typename T>
class PodVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "PodVector moves its elements with realloc");
  static_assert(alignof(T) <= alignof(std::max_align_t), "realloc aligns only to max_align_t");

 public:
  PodVector() = default;
  PodVector(const PodVector&) = delete;
  PodVector& operator=(const PodVector&) = delete;
  PodVector(PodVector&& o) noexcept : data_(o.data_), size_(o.size_), capacity_(o.capacity_) {
    o.data_ = nullptr;
    o.size_ = o.capacity_ = 0;
  }
  PodVector& operator=(PodVector&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = o.data_;
      size_ = o.size_;
      capacity_ = o.capacity_;
      o.data_ = nullptr;
      o.size_ = o.capacity_ = 0;
    }
    return *this;
  }
  ~PodVector() { std::free(data_); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void push_back(const T& value) {
    const T copy = value;  // `value` may be an element that grow() moves
    if (size_ == capacity_) grow(size_ + 1);
    data_[size_++] = copy;
  }
  template <typename... Args>
  void emplace_back(Args&&... args) {
    push_back(T{std::forward<Args>(args)...});
  }
  /// Appends [first, last), which may lie inside this array.
  void append(const T* first, const T* last) {
    const auto n = static_cast<std::size_t>(last - first);
    if (n == 0) return;
    const bool inside = first >= data_ && first < data_ + size_;
    const std::size_t offset = inside ? static_cast<std::size_t>(first - data_) : 0;
    if (size_ + n > capacity_) grow(size_ + n);
    std::memcpy(data_ + size_, inside ? data_ + offset : first, n * sizeof(T));
    size_ += n;
  }
  /// Grows to `n` elements, the new ones equal to `value`; shrinking keeps the capacity.
  void resize(std::size_t n, const T& value = T{}) {
    const T copy = value;
    if (n > capacity_) grow(n);
    for (std::size_t i = size_; i < n; ++i) data_[i] = copy;
    size_ = n;
  }
  void clear() { size_ = 0; }
  /// Frees everything.
  void release() {
    std::free(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

 private:
  void grow(std::size_t at_least) {
    std::size_t capacity = capacity_ < 16 ? 16 : capacity_ * 2;
    if (capacity < at_least) capacity = at_least;
    if (capacity > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    void* p = std::realloc(data_, capacity * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    capacity_ = capacity;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace stepsim::core
