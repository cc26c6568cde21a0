# Sourced by scripts/test.sh and scripts/lock.sh: where to find a given Python, and which lock
# installs its development environment.
#
# Debian 12 ships Python 3.11 alone, and the package registries these machines reach carry no
# builds of CPython, so the other Pythons cannot be installed by the scripts: they come from
# pyenv's versions (as on the project's machines), a pythonX.Y on PATH, or the variable
# DURABLE_DEBUG_PYTHON_X_Y (DURABLE_DEBUG_PYTHON_3_10=/opt/py310/bin/python).

find_python() {  # find_python 3.10: print the path of a Python 3.10, or fail
  local want="$1" var candidate
  var="DURABLE_DEBUG_PYTHON_${want//./_}"
  for candidate in "${!var:-}" "$(command -v "python$want" 2>/dev/null)" \
    "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/python; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] &&
      [ "$("$candidate" -c 'import sys; print(*sys.version_info[:2], sep=".")' 2>/dev/null)" = "$want" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

lock_for() {  # lock_for 3.10: print the lock file that installs that Python's dev environment
  if [ -f "requirements/dev-py${1//./}.lock" ]; then
    echo "requirements/dev-py${1//./}.lock"
  else
    echo requirements/dev.lock
  fi
}
