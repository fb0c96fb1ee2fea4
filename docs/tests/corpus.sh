#!/usr/bin/env bash
# The text corpus of appendix B: Debian's licence texts, concatenated.
#   corpus.sh OUT_FILE
set -euo pipefail
out=$1
mkdir -p "$(dirname "$out")"
d=/usr/share/common-licenses
cat $d/Apache-2.0 $d/Artistic $d/BSD $d/CC0-1.0 $d/GFDL-1.2 $d/GFDL-1.3 $d/GPL-1 $d/GPL-2 $d/GPL-3 \
  $d/LGPL-2 $d/LGPL-2.1 $d/LGPL-3 $d/MPL-1.1 $d/MPL-2.0 > "$out"
