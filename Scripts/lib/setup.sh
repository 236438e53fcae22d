# Shared setup for Ferry's scripts: installs what they need on a fresh Debian machine that has only the Swift
# toolchain. Sourced, not run. Every step is idempotent and fails loudly.

ferry_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# ferry_apt PACKAGE...: installs Debian packages that are missing (one `apt-get update` per run).
ferry_apt() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "error: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    echo "==> installing ${missing[*]}" >&2
    if [ -z "${FERRY_APT_UPDATED:-}" ]; then
        $sudo apt-get update -qq
        export FERRY_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# ferry_pip MODULE PACKAGE: installs a Python package if its module cannot be imported.
ferry_pip() {
    local module="$1" package="$2"
    python3 -c "import $module" 2>/dev/null && return 0
    python3 -m pip --version >/dev/null 2>&1 || ferry_apt python3-pip
    echo "==> pip install $package" >&2
    python3 -m pip install --quiet "$package" 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages "$package" 2>/dev/null \
        || python3 -m pip install --quiet --user "$package"
    python3 -c "import $module" || { echo "error: could not install the Python package $package" >&2; exit 1; }
}

# ferry_build_dependencies: what building Ferry needs.
ferry_build_dependencies() {
    command -v swift >/dev/null || { echo "error: the Swift toolchain is not on PATH" >&2; exit 1; }
    command -v python3 >/dev/null || ferry_apt python3 python3-pip
    ferry_apt libarchive-dev libsqlite3-dev zlib1g-dev libzstd-dev pkg-config zstd sqlite3
}
