#!/bin/sh
# rsmap_jsv.sh: a Job Submission Verifier (sge_jsv(1), protocol 1.0) for rsmapd's resource-map requests.
# Open Cluster Scheduler reads "-l gpu=2" as a number only; the request with its parameters travels in the
# job environment variable RSMAP_REQUEST (docs/integration-ocs.md). For every job this script
#   - refuses SGE_DEBUG_DEVICES_ALLOW in the job's environment: execd would widen the job's device
#     policy with it, and only rsmapd decides a job's devices;
#   - rewrites "-l gpu=2[same=id]" into "-l gpu=2" plus RSMAP_REQUEST=gpu=2[same=id] (a client JSV sees
#     such a -l; qmaster refuses it before a server JSV would);
#   - gives a job that requests a map with a plain "-l gpu=2" RSMAP_REQUEST=gpu=2, so that rsmapd grants
#     (and isolates) every map request, not only those with parameters;
#   - checks the form of RSMAP_REQUEST with "rsmap-hook check-request" (C: no JVM per job; a malformed
#     one is rejected with the parser's message) and that it names the same maps with the same amounts
#     as -l (what the scheduler books); parameter names are checked by rsmapd at job start.
#   - with RSMAP_ALTERNATIVES="gpu=4 || gpu=2 || gpu=1" (requests in the user's order of
#     preference) asks the authority (rsmap-place) which one can start first and makes it the job's
#     request (-l and RSMAP_REQUEST) with the hosts chosen as -l h=...; none can start now: the first one;
#   - with RSMAP_FILTER="cpu_speed > 2GHz" (docs/filters.md) asks the authority which hosts pass and adds
#     them as -l h=host1|host2; a filter that does not parse, or that no host passes, rejects the job
#     naming the column or the attribute. The filter stays in the job's environment: the prolog's
#     JOB_START checks it again on the host. The authority unreachable, or its ERROR of any category but
#     refused or malformed (docs/protocol.md, "Error categories": decided by the category, never the
#     words): the job is accepted as it is and that is logged (the host's check still refuses a wrong
#     placement, prolog exit 99).
# Configuration (environment of the JSV, or the defaults where the packages install things):
#   RSMAP_PLACE      rsmap-place (C, no JVM per job), for RSMAP_FILTER and RSMAP_ALTERNATIVES
#                    (/usr/libexec/rsmap/rsmap-place; "rsmap place" takes the same options)
#   RSMAP_HOOK       rsmap-hook, for the request's form (/usr/libexec/rsmap/rsmap-hook)
#   RSMAP_COMPLEXES  rsmapd's complex table, with the maps as RSMAP - not "qconf -sc"'s (/etc/rsmap/complexes)
#   RSMAP_AUTHORITY_SOCKET  the authority's socket (/run/rsmap/rsmapd.sock: the JSV runs beside it)
# Install: qconf -mconf global, jsv_url script:/usr/libexec/rsmap/rsmap_jsv.sh (server JSV); optionally
# "-jsv /usr/libexec/rsmap/rsmap_jsv.sh" in $SGE_ROOT/$SGE_CELL/common/sge_request (client JSV: the
# rewrite of a bracketed -l).

PLACE=${RSMAP_PLACE:-/usr/libexec/rsmap/rsmap-place}
HOOK=${RSMAP_HOOK:-/usr/libexec/rsmap/rsmap-hook}
COMPLEXES=${RSMAP_COMPLEXES:-/etc/rsmap/complexes}
AUTHORITY=${RSMAP_AUTHORITY_SOCKET:-/run/rsmap/rsmapd.sock}
TAB=$(printf '\t')
errors=$(mktemp "${TMPDIR:-/tmp}/rsmap_jsv.XXXXXX") || exit 1
trap 'rm -f "$errors"' EXIT

send() {
    printf '%s\n' "$*"
}

reset_job() {
    l_name= l_value= master_l= slave_l= request= request_seen= debug_devices= filter= alternatives= pe_max=
}

# One line per entry of a -l list (split at commas outside brackets):
#   map<TAB>full name<TAB>value<TAB>entry     a resource map (name or shortcut of an RSMAP complex)
#   other<TAB>name<TAB>value<TAB>entry        anything else
classify() {
    printf '%s\n' "$1" | awk -v complexes="$COMPLEXES" '
        BEGIN {
            while ((getline line < complexes) > 0) {
                if (line ~ /^[ \t]*#/) continue
                if (split(line, f) >= 3 && toupper(f[3]) == "RSMAP") { full[f[1]] = f[1]; full[f[2]] = f[1] }
            }
        }
        { s = s (NR > 1 ? "\n" : "") $0 }
        function emit(e,   eq, name, value) {
            gsub(/^[ \t]+|[ \t]+$/, "", e)
            if (e == "") return
            eq = index(e, "=")
            name = eq ? substr(e, 1, eq - 1) : e
            value = eq ? substr(e, eq + 1) : ""
            gsub(/[ \t]+$/, "", name)
            gsub(/^[ \t]+/, "", value)
            if (name in full) print "map\t" full[name] "\t" value "\t" e
            else print "other\t" name "\t" value "\t" e
        }
        END {
            depth = 0
            cur = ""
            for (i = 1; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (c == "[") depth++
                else if (c == "]" && depth > 0) depth--
                if (c == "," && depth == 0) { emit(cur); cur = "" } else cur = cur c
            }
            emit(cur)
        }'
}

# The amount -l books for map $1, from ",name=amount,..." in $l_maps; fails when -l does not name it.
l_amount() {
    case "$l_maps" in
        *",$1="*) rest=${l_maps#*",$1="}; printf '%s\n' "${rest%%,*}" ;;
        *) return 1 ;;
    esac
}

result() {
    send "RESULT STATE $*"
}

verify() {
    if [ -n "$debug_devices" ]; then
        result REJECT "rsmap: SGE_DEBUG_DEVICES_ALLOW is not accepted: rsmapd alone sets a job's device policy"
        return
    fi
    if [ ! -r "$COMPLEXES" ]; then
        send "LOG ERROR rsmap JSV: cannot read the complex table $COMPLEXES"
        result REJECT_WAIT "rsmap: the resource-map check is not configured on this cluster, try again later"
        return
    fi
    for scoped in "$master_l" "$slave_l"; do
        if classify "$scoped" | grep -q "^map$TAB"; then
            result REJECT "rsmap: request resource maps in the global scope (-scope master/slave is not supported)"
            return
        fi
    done

    # The maps -l books: as written (l_request), and name=amount (l_maps, new_l for the rewrite).
    rows=$(classify "$l_value")
    new_l= l_maps=, l_request= bracketed=
    while IFS="$TAB" read -r kind name value entry; do
        [ -n "$kind" ] || continue
        if [ "$kind" = map ]; then
            amount=${value%%\[*}
            case "$amount" in
                '' | *[!0-9]*)
                    result REJECT "rsmap: -l $entry: the amount of a resource map is a whole number"
                    return ;;
            esac
            [ "$amount" = "$value" ] || bracketed=yes
            l_maps="$l_maps$name=$amount,"
            l_request="${l_request:+$l_request,}$name=$value"
            entry="$name=$amount"
        fi
        new_l="${new_l:+$new_l,}$entry"
    done <<EOF
$rows
EOF

    request_changed= place_hosts=
    if [ -n "$alternatives" ]; then
        choose || return
    fi
    if [ -n "$bracketed" ]; then
        if [ -n "$request" ]; then
            result REJECT "rsmap: give a resource map's parameters either in -l or in RSMAP_REQUEST, not in both"
            return
        fi
        request=$l_request
        request_changed=yes
    elif [ -z "$request" ] && [ -n "$l_request" ]; then
        request=$l_request # every map request is granted by rsmapd, also one without parameters
        request_changed=yes
    fi
    if [ -z "$alternatives" ] && [ -n "$filter" ]; then
        narrow || return
    fi
    if [ -z "$request" ]; then
        if [ -n "$place_hosts" ]; then
            send "PARAM ${l_name:-l_hard} ${new_l:+$new_l,}h=$place_hosts"
            result CORRECT
        else
            result ACCEPT
        fi
        return
    fi

    # The form of the request, in C (rsmap-hook check-request): no JVM starts per submitted job. Which
    # parameters the host's table defines is checked by rsmapd at job start (a refusal there: exit 100 of
    # the prolog, the job in error state).
    canonical=$request
    "$HOOK" check-request "$request" 2>"$errors"
    status=$?
    if [ "$status" -eq 2 ]; then
        why=$(head -n 1 "$errors")
        why=${why#error: }
        hint=
        case "$request" in
            *\[*) case "$request" in *\]*) ;; *) hint=" (qsub -v cuts a value at commas: export RSMAP_REQUEST and submit with -v RSMAP_REQUEST)" ;; esac ;;
        esac
        result REJECT "rsmap: RSMAP_REQUEST=$request: $why$hint"
        return
    elif [ "$status" -ne 0 ]; then
        send "LOG ERROR rsmap JSV: $HOOK check-request exited $status: $(head -n 1 "$errors")"
        result REJECT_WAIT "rsmap: the resource-map check failed on this cluster, try again later"
        return
    fi

    # RSMAP_REQUEST and -l must agree on every map and amount.
    in_request=,
    rows=$(classify "$canonical")
    while IFS="$TAB" read -r kind name value entry; do
        [ -n "$kind" ] || continue
        if [ "$kind" != map ]; then
            result REJECT "rsmap: RSMAP_REQUEST holds resource maps only; request $name with -l"
            return
        fi
        amount=${value%%\[*}
        if ! booked=$(l_amount "$name"); then
            result REJECT "rsmap: RSMAP_REQUEST asks for $name=$amount but -l does not request $name: add -l $name=$amount"
            return
        fi
        if [ "$booked" != "$amount" ]; then
            result REJECT "rsmap: RSMAP_REQUEST asks for $name=$amount but -l requests $name=$booked: the amounts must agree"
            return
        fi
        in_request="$in_request$name,"
    done <<EOF
$rows
EOF
    # A map booked with -l but missing from RSMAP_REQUEST joins it without parameters.
    rest=${l_maps#,}
    while [ -n "$rest" ]; do
        pair=${rest%%,*}
        rest=${rest#*,}
        case "$in_request" in
            *",${pair%%=*},"*) ;;
            *) canonical="$canonical,$pair"; request_changed=yes ;;
        esac
    done

    corrected=
    if [ -n "$place_hosts" ]; then
        new_l="${new_l:+$new_l,}h=$place_hosts"
        bracketed=yes
    fi
    if [ -n "$bracketed" ]; then
        send "PARAM ${l_name:-l_hard} $new_l"
        corrected=yes
    fi
    if [ -n "$request_changed" ]; then
        send "ENV ${request_seen:-ADD} RSMAP_REQUEST $canonical"
        corrected=yes
    fi
    if [ -n "$corrected" ]; then
        result CORRECT
    else
        result ACCEPT
    fi
}

# A JSON string of $1 (the job's own text: quotes and backslashes escaped).
json_string() {
    printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}

# rsmap-place ARGS --shell against the authority; sets its variables (on an ERROR: error and category);
# returns its exit code (those of rsmap place), except 2 - the request's or filter's fault, a REJECT - only when the ERROR's
# category says so (refused or malformed; docs/protocol.md, "Error categories"): a refusal of another
# category, or an exit 2 with none (a usage error of an older rsmap), is 1, as if the authority had not answered.
ask_authority() {
    decision= alternative= hosts= pass= fail= why= error= category=
    answer=$("$PLACE" --socket "$AUTHORITY" --shell "$@" 2>"$errors")
    status=$?
    case $status in
        0|3|1|2) eval "$answer" ;; # rsmap's own NAME='value' lines, quoted for eval
    esac
    if [ "$status" -eq 2 ]; then
        case $category in
            refused|malformed) ;;
            *) status=1 ;;
        esac
    fi
    return "$status"
}

# RSMAP_ALTERNATIVES: the authority chooses; the chosen request becomes -l and RSMAP_REQUEST.
choose() {
    if [ -n "$request" ] || [ -n "$l_request" ]; then
        result REJECT "rsmap: give either RSMAP_ALTERNATIVES or a resource-map request (-l, RSMAP_REQUEST), not both"
        return 1
    fi
    options= n=0
    rest="$alternatives ||"
    while [ -n "$rest" ]; do
        one=${rest%%||*}
        rest=${rest#*||}
        one=$(printf '%s' "$one" | sed 's/^[ \t]*//; s/[ \t]*$//')
        [ -n "$one" ] || continue
        n=$((n + 1))
        eval "option_$n=\$one"
        o="{\"request\":$(json_string "$one"),\"slots\":${pe_max:-1}"
        [ -z "$filter" ] || o="$o,\"filter\":$(json_string "$filter")"
        options="${options:+$options,}$o}"
    done
    ask_authority --alternatives "[$options]"
    case $? in
        0) ;;
        3) alternative=0 hosts= ;; # none can start now: the first in order waits for its turn
        2) result REJECT "rsmap: RSMAP_ALTERNATIVES: $(head -n 1 "$errors" | sed 's/^error: //; s/^rsmapd: //')"
           return 1 ;;
        *) send "LOG WARNING rsmap JSV: the authority did not answer ($(head -n 1 "$errors")): the first alternative"
           alternative=0 hosts= ;;
    esac
    eval "chosen=\$option_$((alternative + 1))"
    # The chosen request is booked with -l as if the user had written it there.
    rows=$(classify "$chosen")
    while IFS="$TAB" read -r kind name value entry; do
        [ -n "$kind" ] || continue
        amount=${value%%\[*}
        l_maps="$l_maps$name=$amount,"
        new_l="${new_l:+$new_l,}$name=$amount"
    done <<ROWS
$rows
ROWS
    l_request=$chosen bracketed=yes # as if -l had carried it: it becomes -l name=amount and RSMAP_REQUEST
    place_hosts=$(printf '%s' "$hosts" | tr ' ' '|')
    send "ENV ADD RSMAP_ALTERNATIVE $alternative"
    return 0
}

# RSMAP_FILTER alone: the hosts that pass it become -l h=...
narrow() {
    ask_authority --filter "$filter"
    case $? in
        0) place_hosts=$(printf '%s' "$pass" | tr ' ' '|') ;;
        3) result REJECT "rsmap: no host passes RSMAP_FILTER=$filter: $fail"
           return 1 ;;
        2) result REJECT "rsmap: RSMAP_FILTER=$filter: $(head -n 1 "$errors" | sed 's/^error: //; s/^rsmapd: //')"
           return 1 ;;
        *) send "LOG WARNING rsmap JSV: the authority did not answer ($(head -n 1 "$errors")): RSMAP_FILTER is checked on the host" ;;
    esac
    return 0
}

reset_job
while IFS= read -r line || [ -n "$line" ]; do
    command=${line%% *}
    rest=
    [ "$command" = "$line" ] || rest=${line#* }
    case "$command" in
        START)
            reset_job
            send "SEND ENV" # the job's environment: RSMAP_REQUEST, SGE_DEBUG_DEVICES_ALLOW
            send STARTED ;;
        PARAM)
            name=${rest%% *}
            value=
            [ "$name" = "$rest" ] || value=${rest#* }
            case "$name" in
                global_l_hard) l_name=$name l_value=$value ;;
                l_hard) [ "$l_name" = global_l_hard ] || { l_name=$name l_value=$value; } ;;
                master_l_hard) master_l=$value ;;
                slave_l_hard) slave_l=$value ;;
                pe_max) pe_max=$value ;;
            esac ;;
        ENV)
            modifier=${rest%% *}
            rest=${rest#* }
            name=${rest%% *}
            value=
            [ "$name" = "$rest" ] || value=${rest#* }
            if [ "$modifier" = ADD ]; then
                case "$name" in
                    RSMAP_REQUEST) request=$value request_seen=MOD ;;
                    SGE_DEBUG_DEVICES_ALLOW) debug_devices=yes ;;
                    RSMAP_FILTER) filter=$value ;;
                    RSMAP_ALTERNATIVES) alternatives=$value ;;
                esac
            fi ;;
        BEGIN)
            verify
            reset_job ;;
        QUIT)
            exit 0 ;;
    esac
done
