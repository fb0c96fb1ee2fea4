#!/usr/bin/env bash
# Proof that course mode works (scripts/dev.sh course proof): all of it is in
# scripts/course_proof.py, whose docstring says what it proves. It edits the
# sources in place and puts every file back, also when stopped.
exec python3 "$(dirname "$0")/course_proof.py" "$@"
