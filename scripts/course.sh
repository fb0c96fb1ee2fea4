#!/usr/bin/env bash
# Course mode (scripts/dev.sh course ...): every command's logic is in
# scripts/course.py, whose docstring is the usage. exec keeps this process's
# pid, which the build lock records (tests/test_course_lock.sh).
exec python3 "$(dirname "$0")/course.py" "$@"
