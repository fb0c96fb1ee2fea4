// Several ranks for the checks of chapter 21's exercises (ex21_*.cpp).
//
// In course-check the ranks are threads of this process sharing memory
// (ThreadRanks: one tasks::ProcessGroup per thread, its sums and gathers done
// through shared memory with MPI's semantics: a sum reads each rank's data
// when it starts, as MPI may, and completes in wait_sums). In course-check-mpi
// (the MPI build, run as `mpirun -np N`), the ranks are the job's processes
// and the group is tasks::MpiGroup: the same checks, the same code.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "dist/process_group.h"
#include "tensor/error.h"

#ifdef ROPEGRAD_COURSE_MPI
#include "course/mpi_world.h"
#endif

namespace ropegrad::course {

// What the threads share; one ThreadRank per thread talks through it.
class ThreadRanks {
 public:
  explicit ThreadRanks(int n) : n_(n), posted_(static_cast<size_t>(n)), pending_(static_cast<size_t>(n)) {}

  // body(group) on each of the n ranks, each on its own thread. A rank that
  // throws stops the others at their next collective; the first exception
  // (a stub's NotImplemented included) is rethrown here once all have stopped.
  void run(const std::function<void(tasks::ProcessGroup&)>& body);

 private:
  struct Pending {
    double* data;
    std::vector<double> sent;  // the data when the sum started
    int bucket;
  };
  class Rank;
  struct Stopped {};  // another rank threw or returned: this one stops

  void barrier();
  std::string sums_started() const;  // each rank's started buckets, for a mismatch's message

  int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0, done_ = 0;
  int64_t generation_ = 0;
  bool failed_ = false;
  std::vector<const void*> posted_;              // each rank's buffer in the current gather
  std::vector<std::vector<Pending>> pending_;    // each rank's started sums
};

class ThreadRanks::Rank : public tasks::ProcessGroup {
 public:
  Rank(ThreadRanks& all, int rank) : all_(all), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return all_.n_; }
  void start_sum(double* data, int64_t n, int bucket, int64_t) override {
    all_.pending_[static_cast<size_t>(rank_)].push_back({data, std::vector<double>(data, data + n), bucket});
    bytes_ += n * 8;
  }
  void wait_sums(int64_t step) override {
    all_.barrier();  // every rank has started its sums
    const auto& mine = all_.pending_[static_cast<size_t>(rank_)];
    for (const auto& other : all_.pending_) {
      bool same = other.size() == mine.size();
      for (size_t k = 0; same && k < mine.size(); ++k)
        same = other[k].bucket == mine[k].bucket && other[k].sent.size() == mine[k].sent.size();
      RG_CHECK(same, "ThreadRanks", "step {}: the ranks started different sums ({}): MPI would mix them or hang",
               step, all_.sums_started());
    }
    std::vector<std::vector<double>> totals;
    for (size_t k = 0; k < mine.size(); ++k) {
      std::vector<double> t(mine[k].sent.size(), 0.0);
      for (const auto& other : all_.pending_)
        for (size_t e = 0; e < t.size(); ++e) t[e] += other[k].sent[e];
      totals.push_back(std::move(t));
    }
    all_.barrier();  // every rank has read every rank's data
    for (size_t k = 0; k < mine.size(); ++k) std::copy(totals[k].begin(), totals[k].end(), mine[k].data);
    all_.pending_[static_cast<size_t>(rank_)].clear();
  }
  void all_gather(const double* mine, int64_t n, double* all, const std::string&) override {
    gather([&](int r, const void* p) { std::copy_n(static_cast<const double*>(p), n, all + r * n); }, mine);
  }
  std::vector<std::string> all_gather_text(const std::string& mine) override {
    std::vector<std::string> out(static_cast<size_t>(all_.n_));
    gather([&](int r, const void* p) { out[static_cast<size_t>(r)] = *static_cast<const std::string*>(p); }, &mine);
    return out;
  }
  void all_gather_floats(const float* mine, const std::vector<int64_t>& counts, float* out,
                         const std::string&) override {
    gather(
        [&](int r, const void* p) {
          int64_t at = 0;
          for (int q = 0; q < r; ++q) at += counts.at(static_cast<size_t>(q));
          std::copy_n(static_cast<const float*>(p), counts.at(static_cast<size_t>(r)), out + at);
        },
        mine);
  }
  bool rank0_says(bool mine) override {
    bool out = false;
    gather([&](int r, const void* p) { if (r == 0) out = *static_cast<const bool*>(p); }, &mine);
    return out;
  }
  int64_t take_bytes_summed() override { return std::exchange(bytes_, 0); }
  tasks::StepTimes take_times() override { return {}; }

 private:
  // Posts `mine`, then read(r, rank r's post) for every rank.
  void gather(const std::function<void(int, const void*)>& read, const void* mine) {
    all_.posted_[static_cast<size_t>(rank_)] = mine;
    all_.barrier();
    for (int r = 0; r < all_.n_; ++r) read(r, all_.posted_[static_cast<size_t>(r)]);
    all_.barrier();
  }
  ThreadRanks& all_;
  int rank_;
  int64_t bytes_ = 0;
};

inline void ThreadRanks::barrier() {
  std::unique_lock<std::mutex> lock(mu_);
  if (failed_) throw Stopped{};
  if (done_ > 0) {
    failed_ = true;
    cv_.notify_all();
    throw Error("ThreadRanks: a rank returned while another waits in a collective: the ranks made different calls");
  }
  const int64_t generation = generation_;
  if (++arrived_ == n_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, [&] { return generation_ != generation || failed_ || done_ > 0; });
  if (generation_ != generation) return;
  if (failed_) throw Stopped{};
  failed_ = true;
  cv_.notify_all();
  throw Error("ThreadRanks: a rank returned while another waits in a collective: the ranks made different calls");
}

inline std::string ThreadRanks::sums_started() const {
  std::string s;
  for (size_t r = 0; r < pending_.size(); ++r) {
    std::vector<int> buckets;
    for (const Pending& p : pending_[r]) buckets.push_back(p.bucket);
    s += fmt::format("{}rank {}: buckets [{}]", r ? "; " : "", r, fmt::join(buckets, ", "));
  }
  return s;
}

inline void ThreadRanks::run(const std::function<void(tasks::ProcessGroup&)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n_));
  std::vector<std::thread> threads;
  for (int r = 0; r < n_; ++r) {
    threads.emplace_back([&, r] {
      Rank group(*this, r);
      try {
        body(group);
        std::lock_guard<std::mutex> lock(mu_);
        ++done_;
        cv_.notify_all();
      } catch (const Stopped&) {
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
        std::lock_guard<std::mutex> lock(mu_);
        failed_ = true;
        cv_.notify_all();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// The numbers of ranks the multi-rank checks run with: 2 and 3 threads in
// course-check; under mpirun, the job's size.
inline std::vector<int> rank_counts() {
#ifdef ROPEGRAD_COURSE_MPI
  return {mpi_world().size()};
#else
  return {2, 3};
#endif
}

// body(group) on every rank of an n-rank group (under mpirun: this process's
// rank of the job, n being its size); each rank returns what it found wrong
// ("" when nothing). Returns every rank's finding, indexed by rank, to every rank.
inline std::vector<std::string> on_ranks(int n, const std::function<std::string(tasks::ProcessGroup&)>& body) {
#ifdef ROPEGRAD_COURSE_MPI
  RG_CHECK(n == mpi_world().size(), "on_ranks", "asked for {} ranks in a job of {}", n, mpi_world().size());
  return mpi_world().all_gather_text(body(mpi_world()));
#else
  std::vector<std::string> found(static_cast<size_t>(n));
  ThreadRanks ranks(n);
  ranks.run([&](tasks::ProcessGroup& g) { found[static_cast<size_t>(g.rank())] = body(g); });
  return found;
#endif
}

// The first rank's finding, as "with N ranks, rank r: ...", or "".
inline std::string first_finding(const std::vector<std::string>& found) {
  for (size_t r = 0; r < found.size(); ++r)
    if (!found[r].empty()) return fmt::format("with {} ranks, rank {}: {}", found.size(), r, found[r]);
  return "";
}

// One rank of a group whose other ranks are pretended: the hand-computed
// checks see exactly what this rank hands the group and when. A sum sends
// the data as it is when it starts (as MPI may) and, in wait_sums, the data
// becomes that plus `others(bucket, element)`: what the other ranks sent. A
// gather fills the other ranks' parts with 100 + their element index.
class PretendRanks : public tasks::ProcessGroup {
 public:
  PretendRanks(int rank, int size, std::function<double(int, int64_t)> others = nullptr)
      : rank_(rank), size_(size), others_(std::move(others)) {}
  std::vector<std::string> log;  // "start k" for each sum started, in order (the caller adds its own lines)
  std::vector<std::vector<float>> gathered;  // what this rank sent to each all_gather_floats

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void start_sum(double* data, int64_t n, int bucket, int64_t) override {
    log.push_back(fmt::format("start {}", bucket));
    started_.push_back({data, std::vector<double>(data, data + n), bucket});
  }
  void wait_sums(int64_t) override {
    for (const auto& s : started_)
      for (size_t e = 0; e < s.sent.size(); ++e)
        s.data[e] = s.sent[e] + (others_ ? others_(s.bucket, static_cast<int64_t>(e)) : 0.0);
    started_.clear();
  }
  void all_gather(const double*, int64_t, double*, const std::string&) override { unexpected("all_gather"); }
  std::vector<std::string> all_gather_text(const std::string&) override { unexpected("all_gather_text"); }
  void all_gather_floats(const float* mine, const std::vector<int64_t>& counts, float* out,
                         const std::string&) override {
    int64_t at = 0;
    for (int r = 0; r < size_; ++r) {
      const int64_t n = counts.at(static_cast<size_t>(r));
      if (r == rank_) gathered.emplace_back(mine, mine + n);
      for (int64_t e = 0; e < n; ++e) out[at + e] = r == rank_ ? mine[e] : static_cast<float>(100 + at + e);
      at += n;
    }
  }
  bool rank0_says(bool mine) override { return mine; }
  int64_t take_bytes_summed() override { return 0; }
  tasks::StepTimes take_times() override { return {}; }

 private:
  [[noreturn]] static void unexpected(const char* what) {
    throw Error(std::string("PretendRanks: this check does not expect ") + what);
  }
  struct Started {
    double* data;
    std::vector<double> sent;
    int bucket;
  };
  int rank_, size_;
  std::function<double(int, int64_t)> others_;
  std::vector<Started> started_;
};

}  // namespace ropegrad::course
