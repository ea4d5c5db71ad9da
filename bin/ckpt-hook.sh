#!/bin/sh
# ckpt's hook client in POSIX sh + curl (DESIGN §10 "The shell hook client"): the command hook
# `ckpt init` installs where /bin/sh exists. A Node process costs each tool call ~100 ms before it
# does anything; this client costs a few: it finds the store's running daemon as the Node client
# (src/hooks/client/hook-client.ts) does and posts the event to it with curl. Everything else runs the
# Node client with the same arguments and event: no daemon or no curl (it records in-process, starts
# the daemon at a once-per-prompt event and says so once), a shared store, strict mode, `--workspace`,
# project paths it would have to escape. An HTTP answer other than 200 is recorded in-process.
#
# Usage: ckpt-hook.sh NODE [--store DIR] hook AGENT [--daemon]   (NODE: the node that runs ckpt.js)
#
# The daemon's token never appears on a command line: curl reads it from a config on fd 3. curl skips
# ~/.curlrc (-q) and every proxy (--noproxy): the token goes to the claimed loopback port only, and
# only while the claiming process lives.
# `A && B || C` throughout means: C (the Node client) when any test fails.
# shellcheck disable=SC2015
LC_ALL=C
# Exit 1, never the shell's 2 of a failed `shift`: a hook's exit 2 blocks the tool call.
[ $# -ge 1 ] || { echo 'usage: ckpt-hook.sh NODE [--store DIR] hook AGENT [--daemon]' >&2; exit 1; }
node=$1
shift
case $0 in */*) ckpt_js=${0%/*}/ckpt.js ;; *) ckpt_js=./ckpt.js ;; esac

# The Node client, with this process's stdin (nothing read yet).
node_client() { exec "$node" "$ckpt_js" "$@"; }

truthy() { case $1 in 1 | [Tt][Rr][Uu][Ee] | [Yy][Ee][Ss] | [Oo][Nn]) return 0 ;; esac; return 1; }

# The arguments, as parseHookArgs reads them; anything unusual is the Node client's.
store=${CKPT_STORE-}
given=${CKPT_STORE+1}
agent=
daemon=
want=
state=flags
for a in "$@"; do
  if [ -n "$want" ]; then
    store=$a given=1 want=
    continue
  fi
  case $state in
    flags)
      case $a in
        --store) want=store ;;
        --store=*) store=${a#--store=} given=1 ;;
        hook) state=agent ;;
        *) node_client "$@" ;;
      esac ;;
    agent)
      case $a in '' | *[!a-z0-9-]*) node_client "$@" ;; esac
      agent=$a state=rest ;;
    *)
      [ "$a" = --daemon ] && [ -z "$daemon" ] || node_client "$@"
      daemon=1 ;;
  esac
done
[ "$state" = rest ] || node_client "$@"
if truthy "${CKPT_NO_DAEMON-}" || truthy "${CKPT_HOOK_STRICT-}"; then node_client "$@"; fi
command -v curl >/dev/null 2>&1 || node_client "$@"

# The store folder, as store.ts defaultStoreDir finds it; a shared store (a URL) has no local daemon.
if [ -n "$given" ]; then
  case $store in *://*) node_client "$@" ;; /*) ;; *) store=$PWD/$store ;; esac
elif [ -n "${CKPT_HOME-}" ]; then
  case $CKPT_HOME in /*) store=$CKPT_HOME ;; *) store=$PWD/$CKPT_HOME ;; esac
elif [ -n "${XDG_DATA_HOME-}" ]; then
  case $XDG_DATA_HOME in /*) store=$XDG_DATA_HOME/ckpt ;; *) store=$PWD/$XDG_DATA_HOME/ckpt ;; esac
else
  store=${HOME-}/.local/share/ckpt
fi

# The daemon's claim (a live process on a loopback port) and the store's token.
claim='' token=''
[ -f "$store/daemon/daemon.json" ] && [ -f "$store/daemon/token" ] || node_client "$@"
IFS= read -r claim 2>/dev/null <"$store/daemon/daemon.json" || :
IFS= read -r token 2>/dev/null <"$store/daemon/token" || :
case $claim in *'"socket"'*) node_client "$@" ;; esac
# The daemon records with its own size cap: a hook asking for another (CKPT_MAX_FILE_SIZE in bytes
# here; any other spelling is the Node client's to read) records in-process, through the Node client.
cap=16777216
case $claim in *'"maxBlobBytes":'*) cap=${claim#*'"maxBlobBytes":'} ;; esac
cap=${cap%%[!0-9]*}
case ${CKPT_MAX_FILE_SIZE-} in '') asked=16777216 ;; *[!0-9]*) asked=other ;; *) asked=$CKPT_MAX_FILE_SIZE ;; esac
[ "$asked" = "$cap" ] || node_client "$@"
pid=${claim#*'"pid":'}
pid=${pid%%[!0-9]*}
port=${claim#*'"port":'}
port=${port%%[!0-9]*}
host=
case $claim in *'"host":"'*) host=${claim#*'"host":"'} host=${host%%'"'*} ;; esac
case $host in
  '' | 0.0.0.0 | :: | localhost) host=127.0.0.1 ;;
  ::1) host='[::1]' ;;
  127.*) case $host in *[!0-9.]*) node_client "$@" ;; esac ;;
  *) node_client "$@" ;;
esac
case $token in *[!0-9a-f]*) node_client "$@" ;; esac
# kill -0 fails on a process of another user (EPERM): never our daemon, so never sent the token.
[ -n "$pid" ] && [ -n "$port" ] && [ ${#token} -eq 64 ] && kill -0 "$pid" 2>/dev/null || node_client "$@"
# A zombie (killed, not reaped: a container whose PID 1 does not reap) answers kill -0 but serves
# nothing: its state in /proc/PID/stat, after the last ')', is Z (or X). A stopped daemon (T or t:
# Ctrl-Z, SIGSTOP) accepts connections and answers nothing: the Node client records in-process
# instead of waiting out the answer timeout. No /proc: kill -0 is all.
stat=
[ -r "/proc/$pid/stat" ] && IFS= read -r stat 2>/dev/null <"/proc/$pid/stat" || :
case ${stat##*') '} in [ZXTt]*) node_client "$@" ;; esac

# The agent's project folders, as the Node client passes them (every agent table's projectDirEnv);
# a value the header would need escaped for is the Node client's.
hook_env=
for name in CLAUDE_PROJECT_DIR GEMINI_PROJECT_DIR CURSOR_PROJECT_DIR COPILOT_PROJECT_DIR CKPT_OPENCODE_PROJECT_DIR; do
  eval "value=\${$name-}"
  [ -n "$value" ] || continue
  case $value in *[!\ -~]* | *[\"\\%]*) node_client "$@" ;; esac
  hook_env="$hook_env${hook_env:+,}\\\"$name\\\":\\\"$value\\\""
done

# CKPT_DISABLE, which the daemon does not see otherwise (empty: curl sends no such header).
disable=
if truthy "${CKPT_DISABLE-}"; then disable=1; fi

input=$(cat)
# Over the Node client's cap: it drains it and answers as the hook command does.
[ ${#input} -le 8388608 ] || { printf '%s' "$input" | "$node" "$ckpt_js" "$@"; exit $?; }
answer=$(printf '%s' "$input" | curl -q -s --noproxy '*' --connect-timeout 1 --max-time 120 -K /dev/fd/3 \
  --data-binary @- -o - -w '\n%{http_code}' "http://$host:$port/hooks/$agent" 3<<EOF
header = "Authorization: Bearer $token"
header = "Content-Type: application/json"
header = "X-Ckpt-Hook-Env: {$hook_env}"
header = "X-Ckpt-Disable: $disable"
header = "Expect:"
EOF
)
sent=$?
status=${answer##*"
"}
body=${answer%"
"*}
if [ "$status" != 200 ]; then
  # Not reached (curl's 7): the Node client starts the daemon and notes the outage. Reached but no
  # 200: record in-process, as the Node client does after such an answer.
  if [ "$sent" = 7 ]; then
    printf '%s' "$input" | "$node" "$ckpt_js" "$@"
  else
    printf '%s' "$input" | CKPT_NO_DAEMON=1 "$node" "$ckpt_js" "$@"
  fi
  exit $?
fi
case $body in
  *'"decision":"block"'*)
    # Strict mode's block: its reason on stderr, exit 2 (decoding JSON is Node's job; this is rare).
    printf '%s' "$body" | "$node" -e 'let s="";process.stdin.on("data",(d)=>{s+=d}).on("end",()=>{let r=s;try{r=JSON.parse(s).reason}catch{}process.stderr.write(r+"\n")})'
    exit 2 ;;
  '{}')
    # Agents that read a JSON answer from every hook (hook-client.ts JSON_ANSWER_AGENTS).
    case $agent in cursor) printf '{}\n' ;; esac ;;
  *) printf '%s\n' "$body" ;;
esac
exit 0
