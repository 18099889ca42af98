#!/bin/sh
# Fails when a test case's name has a ';': ctest's discovery splits the name
# there, and each half's filter then matches no test, so the case never runs
# while ctest reports it passed (five cases were lost that way).
# Usage: check_test_names.sh TEST_EXECUTABLE...
status=0
for executable in "$@"; do
  names=$("$executable" --list-test-cases --no-colors=true) || exit 1
  bad=$(printf '%s\n' "$names" | grep ';')
  if [ -n "$bad" ]; then
    printf '%s: test case names with a ";" (ctest cannot run them; use "," or ":"):\n%s\n' "$executable" "$bad" >&2
    status=1
  fi
done
exit $status
