#include "tensor/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tensor/error.h"
#include "tensor/parse_number.h"
#include "tensor/printable.h"

namespace ropegrad {

namespace {

thread_local bool t_in_parallel = false;  // nested parallel_for runs inline

// Waits for pred() by spinning, for at most about kSpinMicroseconds; true if
// it came true. A training step calls parallel_for hundreds of times, a few
// microseconds of serial work apart: a thread that sleeps on a condition
// variable between them pays a futex wake and a context switch each time
// (about 10 % of a 2-thread Base step's CPU time went to the kernel's
// scheduler). Spinning briefly first catches the next job, or the other
// parts' end, without either; after that the thread sleeps as before, so an
// idle program does not burn a core. (No BLAS threads spin beside it:
// OpenBLAS runs single-threaded inside this pool.)
constexpr int64_t kSpinMicroseconds = 50;

// Spinning only pays while every thread has a core of its own: with more
// threads than cores, a spinning thread takes the core a working one needs.
template <typename Pred>
bool spin_until(Pred pred, bool allowed) {
  if (!allowed) return pred();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicroseconds);
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= deadline) return pred();
  }
}

class Pool {
 public:
  explicit Pool(int threads)
      : threads_(std::max(1, threads)),
        spin_(threads_ <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1);  // ends a worker's spin
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return threads_; }

  // Runs job(part) for part in [0, parts), the caller taking part 0.
  void run(int parts, const std::function<void(int)>& job) {
    std::unique_lock<std::mutex> lock(run_mutex_);  // one parallel region at a time
    bool someone_sleeps;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      job_ = &job;
      parts_ = parts;
      pending_.store(parts - 1);
      generation_.fetch_add(1);
      someone_sleeps = sleepers_ > 0;
    }
    if (someone_sleeps) wake_.notify_all();
    job(0);
    const auto all_done = [this] { return pending_.load() == 0; };
    if (!spin_until(all_done, spin_)) {
      std::unique_lock<std::mutex> wait_lock(mutex_);
      done_.wait(wait_lock, all_done);
    }
  }

 private:
  void work(int index) {
    uint64_t seen = 0;
    while (true) {
      const std::function<void(int)>* job;
      spin_until([&] { return generation_.load() != seen; }, spin_);
      {
        // The job's fields are read under the lock, consistent with the
        // generation; after a spin that saw it change, this never waits.
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
        --sleepers_;
        if (stop_) return;
        seen = generation_.load();
        if (index >= parts_) continue;
        job = job_;
      }
      t_in_parallel = true;
      (*job)(index);
      t_in_parallel = false;
      if (pending_.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);  // the caller checks pending_ under it before it sleeps
        done_.notify_one();
      }
    }
  }

  int threads_;
  bool spin_;  // no more threads than cores (spin_until)
  std::vector<std::thread> workers_;
  std::mutex mutex_, run_mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int parts_ = 0;
  int sleepers_ = 0;                    // workers waiting on wake_ (under mutex_)
  std::atomic<int> pending_{0};         // parts not yet finished
  std::atomic<uint64_t> generation_{0};  // bumped once per job (under mutex_), read while spinning
  bool stop_ = false;
};

int default_threads() { return threads_from_setting(std::getenv("ROPEGRAD_NUM_THREADS")); }

std::mutex g_pool_mutex;
Pool* g_pool = nullptr;  // created on first use, joined at exit
int g_threads = 0;

// Joins the workers when the program exits, so nothing of theirs (their
// thread-local storage) is left for a leak checker to report. Registered when
// the first pool is made: it runs before the statics that existed by then are
// destroyed, and a parallel_for after it simply makes a new pool.
void join_pool_at_exit() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  delete g_pool;
  g_pool = nullptr;
}

Pool& pool() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  static const bool registered = std::atexit(join_pool_at_exit) == 0;
  (void)registered;
  if (g_pool == nullptr) g_pool = new Pool(g_threads > 0 ? g_threads : default_threads());
  return *g_pool;
}

}  // namespace

int num_threads() { return pool().size(); }

void set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_threads = std::max(1, n);
  if (g_pool != nullptr && g_pool->size() != g_threads) {
    delete g_pool;
    g_pool = nullptr;
  }
}

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (t_in_parallel || n < 2 * grain) {
    fn(begin, end);
    return;
  }
  Pool& p = pool();
  const int parts = static_cast<int>(std::min<int64_t>(p.size(), n / grain));
  if (parts <= 1) {
    fn(begin, end);
    return;
  }
  // An exception in any part (a bad value found inside a kernel, a course
  // stub's NotImplemented) must reach the caller like a serial loop's would:
  // each part catches its own, the pool finishes every part (so no worker is
  // left running a job whose frame is gone), and the lowest part's is rethrown.
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  p.run(parts, [&](int part) {
    const int64_t lo = begin + n * part / parts, hi = begin + n * (part + 1) / parts;
    const bool was = t_in_parallel;
    t_in_parallel = true;
    try {
      fn(lo, hi);
    } catch (...) {
      errors[static_cast<size_t>(part)] = std::current_exception();
    }
    t_in_parallel = was;
  });
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

int threads_from_setting(const char* setting) {
  if (setting == nullptr) return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 8);
  const std::optional<int64_t> n = parse_int64(setting);
  RG_CHECK(n && *n >= 1 && *n <= 1024, "ROPEGRAD_NUM_THREADS", "must be a whole number in 1..1024, got {}",
           quote_bytes(setting));
  return static_cast<int>(std::min<int64_t>(*n, 64));
}

}  // namespace ropegrad
