# Sourced by install.sh. `pip_run ARGS...` runs "$VENV/bin/python -m pip ARGS..." (with
# DRY=1 it prints the command instead).
#
# The peers named in $PARTIAL_PEERS are installed without some of their dependencies on
# purpose (install.sh says which and why). pip then lists what each of them lacks after
# every install that touches it: about 60 lines of "ERROR: pip's dependency resolver ...".
# Those lines, and only those, go to $PEER_LOG; everything else pip prints is shown, and a
# pip that fails stops the script with its whole output. `pip_peer_note WHY` then prints
# one line saying so.
PARTIAL_PEERS=${PARTIAL_PEERS:-}
PEER_LOG=${PEER_LOG:-/dev/null}

pip_run() {
    if [ "${DRY:-0}" = 1 ]; then echo "pip $*"; return 0; fi
    local out status=0
    # PYTHONWARNINGS: setuptools' editable-install banner, printed once per package, says
    # nothing that applies here.
    out=$(PYTHONWARNINGS=ignore "$VENV/bin/python" -m pip "$@" 2>&1) || status=$?
    if [ "$status" != 0 ]; then
        [ -z "$out" ] || printf '%s\n' "$out" >&2
        echo "install.sh: pip $* failed (exit $status)" >&2
        exit "$status"
    fi
    [ -z "$out" ] || printf '%s\n' "$out" | _pip_set_peers_aside >&2
}

# A complaint line is "NAME VERSION requires ..." or "NAME VERSION has requirement ...".
# The resolver's header is shown with the complaints about anything else (or alone, when
# nothing follows it: pip changed its wording), never for the peers' alone.
_pip_set_peers_aside() {
    awk -v peers="$PARTIAL_PEERS" -v logfile="$PEER_LOG" '
        BEGIN { n = split(peers, names, " "); for (i = 1; i <= n; i++) partial[tolower(names[i])] = 1 }
        /^ERROR: pip.s dependency resolver does not currently take into account/ {
            header = $0; set_aside = 0; next
        }
        /^[^ ]+ [^ ]+ (requires|has requirement) / {
            if (tolower($1) in partial) { print >> logfile; set_aside = 1; next }
            if (header != "") print header
            header = ""; print; next
        }
        { if (header != "" && !set_aside) print header; header = ""; print }
        END { if (header != "" && !set_aside) print header }'
}

pip_peer_note() {
    local count
    count=$(grep -c . "$PEER_LOG" 2>/dev/null || true)
    [ "${count:-0}" -gt 0 ] || return 0
    local names=${PARTIAL_PEERS// /, }
    echo "note: ${names%, *} and ${names##*, } are installed without some of their dependencies," \
         "on purpose ($1): pip's complaints about that ($count lines) are in $PEER_LOG"
}
