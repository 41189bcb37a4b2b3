// Mailbox: the lock-free multi-producer queue of one DPS thread, which also knows whether its thread
// is scheduled. Producers push with one CAS; the consumer takes everything at once with one exchange.
// push() returns true exactly when the mailbox was idle, i.e. when the caller must schedule the thread.
#pragma once

#include "dps/kernel/envelope.hpp"

#include <atomic>

namespace dps::detail {

class Mailbox {
 public:
  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // acq_rel: the producer that wakes an idle thread must see everything its last run wrote, since the
  // next run it schedules may be on another OS thread.
  bool push(Envelope* e) noexcept {
    Envelope* old = head_.load(std::memory_order_relaxed);
    do {
      e->next = old == idle_mark() ? nullptr : old;
    } while (!head_.compare_exchange_weak(old, e, std::memory_order_acq_rel, std::memory_order_relaxed));
    return old == idle_mark();
  }

  // Consumer only: everything pushed so far, oldest first (nullptr if none). The mailbox stays busy.
  Envelope* take() noexcept {
    Envelope* list = head_.exchange(nullptr, std::memory_order_acquire);
    if (list == idle_mark()) list = nullptr;
    Envelope* fifo = nullptr;
    while (list) {
      Envelope* next = list->next;
      list->next = fifo;
      fifo = list;
      list = next;
    }
    return fifo;
  }

  // Nothing queued and nobody runs its thread (true stays true until the next push).
  bool idle() const noexcept { return head_.load(std::memory_order_acquire) == idle_mark(); }

  // Consumer only, while its thread runs: something was pushed since the last take.
  bool has_mail() const noexcept {
    Envelope* head = head_.load(std::memory_order_relaxed);
    return head != nullptr && head != idle_mark();
  }

  // Consumer only: mark idle; false if something arrived meanwhile (keep running).
  bool try_idle() noexcept {
    Envelope* expected = nullptr;
    return head_.compare_exchange_strong(expected, idle_mark(), std::memory_order_acq_rel);
  }

 private:
  static Envelope* idle_mark() noexcept { return reinterpret_cast<Envelope*>(alignof(Envelope)); }
  std::atomic<Envelope*> head_{idle_mark()};
};

}  // namespace dps::detail
