// Payload: one data object of any type, moved (never copied) from the operation that posts it to the
// operation that consumes it. Small objects live inside the payload; larger ones on the heap.
//
//   dps::Payload p = dps::Payload::of(Range{0, 10});
//   Range r = p.take<Range>();       // the caller knows the type: graphs check edge types at compile time
//
// The runtime only needs to move, destroy and size a payload; the type is known where it is used.
// Under fault tolerance a sender keeps a copy of what it sends (clone): its type's copy, so that an
// object that shares immutable data (a std::shared_ptr<const T>) is kept without copying that data.
#pragma once

#include "dps/wire_archive.hpp"
#include "dps/wire_size.hpp"

#include <cstddef>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace dps {

class Payload {
 public:
  static constexpr std::size_t kInlineBytes = 32;

  Payload() noexcept = default;
  // A data object: it must be serializable with cereal, since it may cross the network.
  template <class T>
  static Payload of(T&& value) {
    Payload p;
    p.emplace<std::decay_t<T>, true>(std::forward<T>(value));
    return p;
  }
  // A kernel object that never leaves its process (wire size 0).
  template <class T>
  static Payload local(T&& value) {
    Payload p;
    p.emplace<std::decay_t<T>, false>(std::forward<T>(value));
    return p;
  }

  Payload(Payload&& other) noexcept { steal(other); }
  Payload& operator=(Payload&& other) noexcept {
    if (this != &other) {
      reset();
      steal(other);
    }
    return *this;
  }
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;
  ~Payload() { reset(); }

  // Decodes an object of type T from the wire (the receiver knows the type from the graph).
  template <class T>
  static Payload load(WireReader& in) {
    Payload p;
    p.emplace<T, true>();
    in(p.get<T>());
    return p;
  }
  // Encodes the object; only data objects (Payload::of) cross processes.
  void save(WireWriter& out) const {
    if (!vt_ || !vt_->save) throw std::logic_error("dps: a kernel-local payload cannot cross processes");
    vt_->save(address(), out);
  }

  // A copy of the data object: its type's copy constructor, or its wire image read back if it has none.
  Payload clone() const {
    if (!vt_ || !vt_->clone) throw std::logic_error("dps: a kernel-local payload cannot be copied");
    Payload p;
    vt_->clone(address(), p);
    return p;
  }

  bool empty() const noexcept { return vt_ == nullptr; }
  const std::type_info& type() const noexcept { return vt_ ? *vt_->type : typeid(void); }
  std::size_t wire_size() const { return vt_ ? vt_->wire_size(address()) : 0; }

  template <class T>
  T& get() noexcept {
    return *static_cast<T*>(address());
  }
  template <class T>
  const T& get() const noexcept {
    return *static_cast<const T*>(address());
  }
  template <class T>
  T take() {
    T value = std::move(get<T>());
    reset();
    return value;
  }

  void reset() noexcept {
    if (vt_) vt_->destroy(storage_);
    vt_ = nullptr;
  }

 private:
  struct VTable {
    const std::type_info* type;
    void (*move)(void* to, void* from) noexcept;  // move-construct into `to`, destroy `from`
    void (*destroy)(void*) noexcept;
    std::size_t (*wire_size)(const void*);
    void (*save)(const void*, WireWriter&);  // null for kernel-local objects
    void (*clone)(const void*, Payload&);    // ... and this
    bool boxed;
  };

  template <class T>
  static constexpr bool fits_inline =
      sizeof(T) <= kInlineBytes && alignof(T) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<T>;

  template <class T>
  static void move_object(void* to, void* from) noexcept {
    if constexpr (fits_inline<T>) {
      ::new (to) T(std::move(*static_cast<T*>(from)));
      static_cast<T*>(from)->~T();
    } else {
      *static_cast<T**>(to) = *static_cast<T**>(from);
    }
  }
  template <class T>
  static void destroy_object(void* storage) noexcept {
    if constexpr (fits_inline<T>)
      static_cast<T*>(storage)->~T();
    else
      delete *static_cast<T**>(storage);
  }
  template <class T, bool Wire>
  static std::size_t size_object(const void* object) {
    if constexpr (Wire)
      return dps::wire_size(*static_cast<const T*>(object));
    else
      return (void)object, 0;
  }
  template <class T, bool Wire>
  static constexpr auto saver() {
    using Save = void (*)(const void*, WireWriter&);
    if constexpr (Wire)
      return static_cast<Save>([](const void* object, WireWriter& out) { out(*static_cast<const T*>(object)); });
    else
      return static_cast<Save>(nullptr);
  }
  template <class T, bool Wire>
  static constexpr auto cloner() {
    using Clone = void (*)(const void*, Payload&);
    if constexpr (!Wire) {
      return static_cast<Clone>(nullptr);
    } else {
      return static_cast<Clone>([](const void* object, Payload& into) {
        const T& value = *static_cast<const T*>(object);
        if constexpr (std::is_copy_constructible_v<T>) {
          into.emplace<T, true>(value);
        } else {
          std::string image;
          encode_into(value, image);
          WireReader in(std::as_bytes(std::span(image.data(), image.size())));
          into = load<T>(in);
        }
      });
    }
  }
  template <class T, bool Wire>
  static const VTable* vtable() {
    static constexpr VTable vt{&typeid(T),       &move_object<T>,   &destroy_object<T>, &size_object<T, Wire>,
                               saver<T, Wire>(), cloner<T, Wire>(), !fits_inline<T>};
    return &vt;
  }

  template <class T, bool Wire, class... A>
  void emplace(A&&... args) {
    if constexpr (fits_inline<T>)
      ::new (storage_) T(std::forward<A>(args)...);
    else
      *reinterpret_cast<T**>(storage_) = new T(std::forward<A>(args)...);
    vt_ = vtable<T, Wire>();
  }

  void* address() const noexcept {
    auto* s = const_cast<unsigned char*>(storage_);
    return vt_ && vt_->boxed ? *reinterpret_cast<void**>(s) : static_cast<void*>(s);
  }

  void steal(Payload& other) noexcept {
    if (other.vt_) {
      other.vt_->move(storage_, other.storage_);
      vt_ = std::exchange(other.vt_, nullptr);
    }
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const VTable* vt_ = nullptr;
};

}  // namespace dps
