#include "course/mpi_world.h"

#include <cstdio>

#include "dist/mpi/data_parallel.h"

namespace ropegrad::course {

tasks::ProcessGroup& mpi_world() {
  // A rank that stops before a collective makes the others give up after 60 s, not hang.
  static tasks::MpiGroup world(60.0);
  return world;
}

void start_mpi_world() {
  if (mpi_world().rank() != 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) std::perror("course-check-mpi: /dev/null");
  }
}

}  // namespace ropegrad::course
