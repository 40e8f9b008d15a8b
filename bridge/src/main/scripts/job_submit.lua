-- job_submit.lua: rsmap at Slurm submission (docs/integration-slurm.md "At submission").
-- slurmctld runs slurm_job_submit for every sbatch, salloc and srun job (JobSubmitPlugins=lua; the file
-- lives next to slurm.conf). For a job with --rsmap it adds the GRES counts the request implies, so that
-- slurmctld places it only where enough instances exist; for a job with --rsmap-filter it asks rsmap
-- which hosts pass, excludes the others, and refuses the job when none passes. Lua 5.1 (Debian's Slurm).
--
-- The SPANK plugin puts both into the job control environment: job_desc.spank_job_env is a table
-- (indexed from 0) of "RSMAP_REQUEST=..." and "RSMAP_FILTER=..." strings, which slurmd hands to the
-- prolog as SPANK_RSMAP_REQUEST and SPANK_RSMAP_FILTER.
--
-- Settings, from slurmctld's environment (systemctl edit slurmctld: Environment=...; empty is unset):
--   RSMAP_PLACE_MODULE      the Lua module that asks the authority inside slurmctld, no process per
--                           submission (default /usr/lib/rsmap/rsmap_place.so)
--   RSMAP_PLACE_COMMAND     a place command to run for each submission instead (used also when the module
--                           cannot be loaded: then /usr/libexec/rsmap/rsmap-place, C, a millisecond; "rsmap
--                           place" takes the same options but starts a JVM, about half a second)
--   RSMAP_AUTHORITY_SOCKET  the authority's socket, passed as --socket (default: RSMAP_SOCKET, else
--                           /run/rsmap/rsmapd.sock, rsmap's own default)
--   RSMAP_PLACE_TIMEOUT     seconds to wait for it (default 5, at most 30): slurmctld waits, holding its
--                           job lock

local function setting(name)
    local v = os.getenv(name)
    if v == "" then return nil end
    return v
end

local COMMAND = setting("RSMAP_PLACE_COMMAND")
local PLACE = COMMAND or "/usr/libexec/rsmap/rsmap-place"
local MODULE = setting("RSMAP_PLACE_MODULE") or "/usr/lib/rsmap/rsmap_place.so"
local SOCKET = setting("RSMAP_AUTHORITY_SOCKET")
-- The module's socket, resolved once here: the module then never reads the environment inside a
-- multi-threaded slurmctld (getenv races setenv). The same choice as the command's: --socket, else
-- RSMAP_SOCKET, else rsmap's default (rsmap-client.c).
local MODULE_SOCKET = SOCKET or setting("RSMAP_SOCKET") or "/run/rsmap/rsmapd.sock"
local TIMEOUT = tonumber(os.getenv("RSMAP_PLACE_TIMEOUT") or "") or 5
if not (TIMEOUT > 0) then TIMEOUT = 5 end -- NaN too
if TIMEOUT > 30 then TIMEOUT = 30 end

-- The module's place(filter, request, socket, timeout): the two values read from the command's output
-- below (its JSON line, its error line), from the same exchange (rsmap-place-ask.c). Loaded once per
-- load of this script; nil, and why, where the command is used instead.
local module_place, module_why
if COMMAND then
    module_why = "RSMAP_PLACE_COMMAND is set"
else
    local open, why = package.loadlib(MODULE, "luaopen_rsmap_place")
    local ok, m = false, why
    if open then ok, m = pcall(open) end
    if ok and type(m) == "table" and type(m.place) == "function" then
        module_place = m.place
    else
        module_why = MODULE .. " cannot be loaded: " .. tostring(m)
    end
end
-- What asks the authority, in log lines.
local ASKER = module_place and MODULE or PLACE
local told = false

-- gres.conf beside this script (and slurm.conf): its Name=rsmap_<map> values are the maps Slurm counts
-- (`rsmap gres-conf` writes them; the prefix keeps Slurm's own gpu/mps/shard/nic plugins out).
local PREFIX = "rsmap_"
local HERE = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./")

local function shell_quote(s)
    return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function trim(s)
    return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

-- The maps gres.conf counts (written by `rsmap gres-conf`); read at each submission, it is small.
local function gres_names()
    local names = {}
    local f = io.open(HERE .. "gres.conf", "r")
    if not f then return names end
    for line in f:lines() do
        line = line:gsub("#.*", "")
        for name in line:gmatch("[Nn][Aa][Mm][Ee]=" .. PREFIX .. "([^%s]+)") do names[name] = true end
    end
    f:close()
    return names
end

-- "NAME=value" strings of the job control environment, by NAME (SPANK_ taken off where present).
local function spank_env(job_desc)
    local env = {}
    local t = job_desc.spank_job_env
    if type(t) ~= "table" then return env end
    for _, kv in pairs(t) do
        local k, v = tostring(kv):match("^([^=]+)=(.*)$")
        if k then env[(k:gsub("^SPANK_", ""))] = v end
    end
    return env
end

-- The request's entries, split at the commas outside brackets (docs/language.md "Requests":
-- gpu=4[same=id,scope=job] is one entry).
local function entries(request)
    local out, depth, start = {}, 0, 1
    for i = 1, #request do
        local c = request:sub(i, i)
        if c == "[" then depth = depth + 1
        elseif c == "]" then depth = depth - 1
        elseif c == "," and depth == 0 then
            out[#out + 1] = trim(request:sub(start, i - 1))
            start = i + 1
        end
    end
    out[#out + 1] = trim(request:sub(start))
    return out
end

-- gres:rsmap_NAME:AMOUNT for each entry NAME=AMOUNT[...] whose NAME gres.conf counts. A map gres.conf does not
-- count (a per-slot map, a map of no node, a shortcut) gets no GRES: rsmapd decides it at job start.
local function implied_gres(request)
    local counted, out = gres_names(), {}
    for _, e in ipairs(entries(request)) do
        local name, amount = e:match("^([%a_][%w_%.%-]*)%s*=%s*(%d+)")
        if name and counted[name] then out[#out + 1] = { name = PREFIX .. name, amount = tonumber(amount) } end
    end
    return out
end

-- The user's own GRES stand: a rsmap_<map> the user already asked for by --gres is left as asked.
local function add_gres(job_desc, gres)
    if #gres == 0 then return end
    local have, parts = {}, {}
    local given = job_desc.tres_per_node
    if given and given ~= "" then
        for tok in given:gmatch("[^,]+") do
            parts[#parts + 1] = tok
            have[(tok:gsub("^gres[:/]", ""):match("^([^:]+)"))] = true
        end
    end
    for _, g in ipairs(gres) do
        -- tres_per_node holds TRES, "gres:NAME:COUNT": Slurm adds no prefix when a script sets it
        if not have[g.name] then parts[#parts + 1] = "gres:" .. g.name .. ":" .. g.amount end
    end
    job_desc.tres_per_node = table.concat(parts, ",")
end

local ESCAPES = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

-- A small JSON reader for the one line `rsmap place --json` prints: objects, arrays, strings, numbers,
-- true/false/null. Returns nil on anything else.
local function json_decode(s)
    local pos = 1
    local value
    local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
    local function str()
        pos = pos + 1
        -- the plain run up to the next quote or backslash in one piece, not one step per character; a
        -- string without escapes (a host name, nearly every string here) is that run itself
        local stop = s:find('["\\]', pos)
        if not stop then return nil end
        if s:byte(stop) == 34 then
            local v = s:sub(pos, stop - 1)
            pos = stop + 1
            return v
        end
        local out = {}
        while true do
            stop = s:find('["\\]', pos)
            if not stop then return nil end
            if stop > pos then out[#out + 1] = s:sub(pos, stop - 1) end
            pos = stop
            local c = s:sub(pos, pos)
            if c == '"' then pos = pos + 1; return table.concat(out) end
            if c == "\\" then
                local e = s:sub(pos + 1, pos + 1)
                if e == "u" then
                    local code = tonumber(s:sub(pos + 2, pos + 5), 16)
                    if not code then return nil end
                    out[#out + 1] = code < 128 and string.char(code) or "?"
                    pos = pos + 6
                else
                    out[#out + 1] = ESCAPES[e] or e
                    pos = pos + 2
                end
            end
        end
    end
    function value()
        ws()
        local c = s:sub(pos, pos)
        if c == "{" then
            local t = {}
            pos = pos + 1
            ws()
            if s:sub(pos, pos) == "}" then pos = pos + 1; return t end
            while true do
                ws()
                if s:sub(pos, pos) ~= '"' then return nil end
                local k = str()
                ws()
                if not k or s:sub(pos, pos) ~= ":" then return nil end
                pos = pos + 1
                local v = value()
                if v == nil then return nil end
                t[k] = v
                ws()
                local d = s:sub(pos, pos)
                pos = pos + 1
                if d == "}" then return t end
                if d ~= "," then return nil end
            end
        elseif c == "[" then
            local t = {}
            pos = pos + 1
            ws()
            if s:sub(pos, pos) == "]" then pos = pos + 1; return t end
            while true do
                local v = value()
                if v == nil then return nil end
                t[#t + 1] = v
                ws()
                local d = s:sub(pos, pos)
                pos = pos + 1
                if d == "]" then return t end
                if d ~= "," then return nil end
            end
        elseif c == '"' then
            return str()
        elseif s:sub(pos, pos + 3) == "true" then pos = pos + 4; return true
        elseif s:sub(pos, pos + 4) == "false" then pos = pos + 5; return false
        elseif s:sub(pos, pos + 3) == "null" then pos = pos + 4; return false
        else
            local n = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
            if not n or n == "" then return nil end
            pos = pos + #n
            return tonumber(n)
        end
    end
    local v = value()
    ws()
    if pos <= #s then return nil end
    return v
end

-- rsmap-place bounds its own wait (RSMAP_TIMEOUT, whole seconds): one process less per submission than
-- timeout(1), which bounds any other place command (the Java `rsmap place`).
local bound = PLACE:match("rsmap%-place$") and ("RSMAP_TIMEOUT=" .. math.max(1, math.floor(TIMEOUT)) .. " exec ")
    or ("exec timeout " .. TIMEOUT .. " ")

-- Runs the place command: its JSON line (the answer when some or no host passes; {"error","category"} when
-- rsmapd answered ERROR) and its first other line (the error for the log). The shell execs the command
-- instead of forking it and waiting (a process and a wake-up less while slurmctld holds its job lock), so
-- Lua 5.1's popen, which gives no exit code, has none to give: the line decides, and its form says what the
-- exit code would (rsmap place prints the answer only on exit 0 or 3, the category only with an ERROR).
local function run_command(filter, request)
    local cmd = bound .. PLACE .. " --filter " .. shell_quote(filter)
    if request then cmd = cmd .. " --request " .. shell_quote(request) end
    cmd = cmd .. " --json"
    if SOCKET then cmd = cmd .. " --socket " .. shell_quote(SOCKET) end
    local p = io.popen(cmd .. " 2>&1 </dev/null", "r")
    if not p then return nil, "cannot run " .. PLACE end
    local json, err = nil, nil
    for line in p:lines() do
        if not json and line:sub(1, 1) == "{" then json = line
        elseif not err and line ~= "" then err = line
        end
    end
    p:close()
    return json, err
end

-- The authority's PLACE for the filter (and request): the module in this process where it loaded, else the
-- command; said once in the log, at the first filtered submission after each load of this script.
local function place(filter, request)
    if not told then
        told = true
        if module_place then
            slurm.log_info("rsmap: --rsmap-filter is asked of the authority in slurmctld by %s", MODULE)
        else
            slurm.log_info("rsmap: --rsmap-filter is asked of the authority by running %s (%s)", PLACE, module_why)
        end
    end
    if not module_place then return run_command(filter, request) end
    -- a Lua error (out of memory) is no answer, like any other: fail open below, never refuse the job for it
    local ok, line, err = pcall(module_place, filter, request, MODULE_SOCKET, TIMEOUT)
    if not ok then return nil, tostring(line) end
    return line, err
end

-- The hosts the filter excludes join the user's own exclusions; no host passing refuses the job.
local function apply_filter(job_desc, filter, request)
    local line, err = place(filter, request)
    local answer = line and json_decode(line)
    -- Decided by the ERROR's category (docs/protocol.md, "Error categories"), never its words: refused or
    -- malformed is the filter's or request's fault (also a filter and request too long for one frame, which
    -- the module and rsmap-place refuse unsent). Anything else - busy, denied, unavailable (an answer over
    -- the frame bound too, the socket of an execution host rather than the authority's), internal, a usage
    -- error without a category (an rsmap without the place command) - fails open below.
    if type(answer) == "table" and type(answer.error) == "string"
        and (answer.category == "refused" or answer.category == "malformed") then
        slurm.log_user("rsmap: --rsmap-filter: %s", (answer.error:gsub("^rsmapd: ", ""):gsub("^filter: ", "")))
        return slurm.ERROR
    end
    -- The answer (rsmap place's exit 0 when some host passes, 3 when none does) has both lists.
    if type(answer) ~= "table" or type(answer.pass) ~= "table" or type(answer.fail) ~= "table" then
        -- Fail open: the filter is not checked here, but rsmapd checks it at each node's job start and
        -- refuses the job there (JOB_START's "filter"), so no job runs on a host that fails it.
        slurm.log_error("rsmap: %s unreachable or unreadable (%s): --rsmap-filter not checked at "
            .. "submission; rsmapd checks it at job start", ASKER, err or line or "no answer")
        return slurm.SUCCESS
    end
    if #answer.pass == 0 then
        if #answer.fail == 0 then
            slurm.log_error("rsmap: %s knows no host: --rsmap-filter not checked at submission", ASKER)
            return slurm.SUCCESS
        end
        local f = answer.fail[1]
        slurm.log_user("rsmap: no host passes --rsmap-filter '%s': %s fails on %s%s: %s",
            tostring(answer.filter or filter), tostring(f.host), tostring(f.attribute),
            (f.source == "admin" and " (admin limit)" or ""), tostring(f.why))
        return slurm.ERROR
    end
    if #answer.fail > 0 then
        local hosts = {}
        if job_desc.exc_nodes and job_desc.exc_nodes ~= "" then hosts[1] = job_desc.exc_nodes end
        for _, f in ipairs(answer.fail) do hosts[#hosts + 1] = tostring(f.host) end
        job_desc.exc_nodes = table.concat(hosts, ",")
    end
    return slurm.SUCCESS
end

function slurm_job_submit(job_desc, part_list, submit_uid)
    local env = spank_env(job_desc)
    local request, filter = env["RSMAP_REQUEST"], env["RSMAP_FILTER"]
    if request and request ~= "" then
        if request:find("||", 1, true) then
            -- Alternatives are chosen at job start; which one's counts to ask for is not known here.
            slurm.log_info("rsmap: request with alternatives, no GRES added: %s", request)
        else
            add_gres(job_desc, implied_gres(request))
        end
    end
    if filter and filter ~= "" then
        return apply_filter(job_desc, filter, (request ~= "" and request) or nil)
    end
    return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
    return slurm.SUCCESS
end
