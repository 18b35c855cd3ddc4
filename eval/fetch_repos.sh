#!/usr/bin/env bash
# Recreate the code the DL101 labels point at (nothing fetched is committed to dllint).
#
# 1. Bring each labeled repository's snapshot onto the machine with the tool library's `fetch`
#    (a tool of the coding session, not a shell command): fetch("github:OWNER/NAME") for every
#    repository listed by:   python eval/fetch_repos.sh --list
#    It lands in /work/.mirror/OWNER+NAME/repo.
# 2. Then run this script: it writes each repository's source files at the labeled commit into
#    ${REPOS:-/work/repos}/OWNER+NAME (python eval/checkout.py).
# 3. Score: python eval/score.py dl101 [--split dev|holdout]
set -euo pipefail
cd "$(dirname "$0")"
pairs=$(python - <<'PY'
import csv, glob
seen = {}
for path in sorted(glob.glob("dl101/labels/*.csv")):
    for row in csv.DictReader(open(path, newline="")):
        seen[row["repo"]] = row["commit"]
for repo, commit in sorted(seen.items()):
    print(repo, commit)
PY
)
if [ "${1:-}" = "--list" ]; then
    echo "$pairs"
    exit 0
fi
mirror=${MIRROR:-/work/.mirror}
dest=${REPOS:-/work/repos}
while read -r repo commit; do
    key=${repo/\//+}
    if [ -d "$dest/$key" ]; then continue; fi
    git_dir="$mirror/$key/repo"
    # fetch brings a bare git directory, or now and then a clone with its .git inside
    if [ -d "$git_dir/.git" ]; then git_dir="$git_dir/.git"; fi
    python checkout.py "$git_dir" "$commit" "$dest/$key"
done <<< "$pairs"
