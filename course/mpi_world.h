// course-check-mpi only (the MPI build): the ranks of the mpirun job that runs
// chapter 21's checks (course/checks/rank_groups.h).
#pragma once

#include "dist/process_group.h"

namespace ropegrad::course {

// The job's group (tasks::MpiGroup, MPI_Init on the first call).
tasks::ProcessGroup& mpi_world();

// Called first in main: starts MPI; ranks other than 0 print nothing (every
// check hands every rank's findings to every rank, so rank 0 says it all).
void start_mpi_world();

}  // namespace ropegrad::course
