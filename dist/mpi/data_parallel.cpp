#include "dist/mpi/data_parallel.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "tensor/error.h"

namespace ropegrad::tasks {

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Seconds spent in a scope, added to a counter.
class Timed {
 public:
  explicit Timed(double* total) : total_(total), start_(now()) {}
  ~Timed() { *total_ += now() - start_; }

 private:
  double* total_;
  double start_;
};

int checked_int(int64_t n, const std::string& what) {
  RG_CHECK(n >= 0 && n <= INT32_MAX, "data parallel", "{}: {} elements is more than one MPI call takes", what, n);
  return static_cast<int>(n);
}

}  // namespace

bool MpiGroup::launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}

void MpiGroup::abort_all(int code) {
  int ready = 0;
  MPI_Initialized(&ready);
  if (ready) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

MpiGroup::MpiGroup(double timeout_seconds) : timeout_(timeout_seconds) {
  RG_CHECK(timeout_seconds > 0, "data parallel", "--dp-timeout must be positive, got {}", timeout_seconds);
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (const char* die = std::getenv("ROPEGRAD_DP_TEST_DIE_AT_STEP"); die != nullptr && rank_ == 1) {
    die_at_ = std::atoll(die);
  }
  if (const char* hang = std::getenv("ROPEGRAD_DP_TEST_HANG_AT_STEP"); hang != nullptr && rank_ == 1) {
    hang_at_ = std::atoll(hang);
  }
}

MpiGroup::~MpiGroup() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

void MpiGroup::maybe_die(int64_t step) {
  if (die_at_ > 0 && step == die_at_) {
    std::fprintf(stderr, "rank %d: ROPEGRAD_DP_TEST_DIE_AT_STEP: exiting at step %lld\n", rank_,
                 static_cast<long long>(step));
    std::_Exit(7);  // as a crash would: no MPI_Finalize, no flush of anything
  }
  if (hang_at_ > 0 && step == hang_at_) {
    std::fprintf(stderr, "rank %d: ROPEGRAD_DP_TEST_HANG_AT_STEP: hanging at step %lld\n", rank_,
                 static_cast<long long>(step));
    std::fflush(stderr);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // until the others' timeout aborts the job
  }
}

// Bucket k's sum across the ranks, started now and left running.
void MpiGroup::start_sum(double* data, int64_t n, int bucket, int64_t step) {
  Timed t(&times_.communication_in_backward);
  Pending p{MPI_REQUEST_NULL, bucket, step};
  MPI_Iallreduce(MPI_IN_PLACE, data, checked_int(n, "a bucket"), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &p.request);
  pending_.push_back(p);
  bytes_ += n * static_cast<int64_t>(sizeof(double));
  poll();
}

void MpiGroup::poll() {
  for (Pending& p : pending_) {
    int done = 0;
    if (p.request != MPI_REQUEST_NULL) MPI_Test(&p.request, &done, MPI_STATUS_IGNORE);
  }
}

void MpiGroup::wait_for(MPI_Request& request, const std::string& what, double* seconds) {
  Timed t(seconds);
  const double deadline = now() + timeout_;
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (now() > deadline) {
      std::fprintf(stderr, "data parallel: rank %d waited %g s for %s: a rank has died or hung; stopping\n", rank_,
                   timeout_, what.c_str());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    // Oversubscribed ranks share cores: yield rather than spin.
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void MpiGroup::wait_sums(int64_t step) {
  for (Pending& p : pending_) {
    wait_for(p.request, fmt::format("the gradient sum (bucket {} of step {})", p.bucket, step), &times_.waiting);
  }
  pending_.clear();
}

void MpiGroup::all_gather(const double* mine, int64_t n, double* all, const std::string& what) {
  Timed t(&times_.communication);
  MPI_Request r;
  const int count = checked_int(n, what);
  MPI_Iallgather(mine, count, MPI_DOUBLE, all, count, MPI_DOUBLE, MPI_COMM_WORLD, &r);
  double ignored = 0;
  wait_for(r, what, &ignored);
}

std::vector<std::string> MpiGroup::all_gather_text(const std::string& mine) {
  const int64_t length = static_cast<int64_t>(mine.size());
  std::vector<double> lengths(static_cast<size_t>(size_));
  const double mine_length = static_cast<double>(length);
  all_gather(&mine_length, 1, lengths.data(), "the settings check");
  std::vector<int> counts, displs;
  int total = 0;
  for (double l : lengths) {
    counts.push_back(static_cast<int>(l));
    displs.push_back(total);
    total += static_cast<int>(l);
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Request r;
  MPI_Iallgatherv(mine.data(), static_cast<int>(length), MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR,
                  MPI_COMM_WORLD, &r);
  double ignored = 0;
  wait_for(r, "the settings check", &ignored);
  std::vector<std::string> out;
  for (int k = 0; k < size_; ++k) out.push_back(all.substr(static_cast<size_t>(displs[k]), static_cast<size_t>(counts[k])));
  return out;
}

void MpiGroup::all_gather_floats(const float* mine, const std::vector<int64_t>& counts, float* out,
                                 const std::string& what) {
  Timed t(&times_.communication);
  std::vector<int> c, displs;
  int64_t at = 0;
  for (int64_t n : counts) {
    c.push_back(checked_int(n, what));
    displs.push_back(checked_int(at, what));
    at += n;
  }
  MPI_Request r;
  MPI_Iallgatherv(mine, c.at(static_cast<size_t>(rank_)), MPI_FLOAT, out, c.data(), displs.data(), MPI_FLOAT,
                  MPI_COMM_WORLD, &r);
  double ignored = 0;
  wait_for(r, what, &ignored);
}

bool MpiGroup::rank0_says(bool mine) {
  int value = mine ? 1 : 0;
  MPI_Request r;
  MPI_Ibcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
  double ignored = 0;
  wait_for(r, "rank 0's decision to stop", &ignored);
  return value != 0;
}

int64_t MpiGroup::take_bytes_summed() { return std::exchange(bytes_, 0); }

StepTimes MpiGroup::take_times() {
  StepTimes t = times_;
  t.communication += t.communication_in_backward;
  times_ = {};
  return t;
}

}  // namespace ropegrad::tasks
