// Configuration generations: complex_values change by RELOAD (or between two runs) only when every
// running job keeps its exact grant.
package rsmap.daemon.job;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import rsmap.ParseException;
import rsmap.alloc.Cluster;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.ConfigText;
import rsmap.daemon.config.HostSettings;
import rsmap.daemon.devices.GpuHost;
import rsmap.daemon.devices.HostDevices;
import rsmap.daemon.records.JournalRecord;
import rsmap.daemon.records.Records;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Refusal;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.wire.Code;
import rsmap.wire.Frame;

/**
 * A new generation is journaled before it takes effect, and announced to every event stream. RELOAD
 * re-reads the configuration file: only complex_values and global_complex_values may change (and the
 * realloc settings, which are no generation); anything
 * else (host, complex table, socket, state, backend) needs a restart, and an execd spool without
 * {@code active_jobs} is refused as at start.
 */
public final class Generations {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HostState s;
    private final Records journal;
    private final EventHub events;
    private final LogBook log;
    /** Waiting reallocs go over to a new core. */
    private final Reallocation reallocation;
    /** Where the configuration came from; null: RELOAD is refused. */
    private final Path configFile;

    /** How a configuration read by RELOAD gets its GPUs: a host reads NVML again, an authority has none. */
    private final GpuHost.Reader gpus;
    /** What a grant makes on the host: RELOAD keeps its parts in step with the new generation. */
    private final HostDevices devices;

    public Generations(HostState s, HostDevices devices, Records journal, EventHub events, LogBook log, Path configFile,
                Reallocation reallocation, GpuHost.Reader gpus) {
        this.s = s;
        this.devices = devices;
        this.gpus = gpus;
        this.reallocation = reallocation;
        this.journal = journal;
        this.events = events;
        this.log = log;
        this.configFile = configFile;
    }

    /**
     * Switches to new complex_values, keeping every running job's exact grant; refused (state unchanged)
     * when that is impossible, naming the job and the instance.
     */
    void reconfigure(String host, String global) throws Refusal {
        Cluster next;
        try {
            next = s.build(host, global);
        } catch (ParseException e) {
            throw Refusal.refused("complex_values: " + e.getMessage());
        }
        rsmap.realloc.Reallocs nextReallocs = s.reallocsOver(next);
        nextReallocs.continueAfter(s.reallocs().lastAllocId());
        Optional<String> lost = restoreAll(s, nextReallocs);
        if (lost.isPresent()) {
            throw Refusal.refused("the new configuration would take away what " + lost.get());
        }
        long nextGeneration = s.generation() + 1;
        journal.write(new JournalRecord.Configured(nextGeneration, host, global, s.reallocs().lastAllocId()));
        journal.force(); // recovery and RELOAD go on from the new generation only once it is on disk
        rsmap.realloc.Reallocs before = s.reallocs();
        s.install(next, nextReallocs);
        reallocation.carry(before, nextReallocs);
        s.configured(nextGeneration, host, global);
        events.publish("config", s.mapNames(), null, null, () -> {
            ObjectNode diff = JSON.createObjectNode().put("event", "config").put("generation", s.generation());
            diff.set("maps", Views.maps(s, null, null, EventHub.Filters.NONE));
            return diff;
        }, stream -> true);
    }

    /**
     * RELOAD: STATE {generation, changed}; {@code changed} is true when complex_values,
     * global_complex_values, realloc or realloc_policy changed (only the first two make a generation).
     */
    public List<Frame> reload(long tid) throws Refusal {
        if (configFile == null) {
            throw Refusal.refused("this daemon was not started from a configuration file");
        }
        HostDevices.BeforeReload mig = devices.beforeReload(); // reading the configuration fills MIG's cards and settings anew
        try {
            return reloaded(tid);
        } catch (Refusal e) { // refused before anything was installed
            devices.reloadRefused(mig); // MIG as it was, creation taints too (docs/gpus.md)
            throw e;
        }
    }

    private List<Frame> reloaded(long tid) throws Refusal {
        Config next;
        Config config = s.config;
        try {
            next = Config.parse(ConfigText.read(configFile), configFile, config.host());
            HostSettings.checkSpool(next, configFile);
        } catch (ParseException e) {
            throw Refusal.refused(configFile + ": " + e.lineAndColumn() + ": " + e.problem());
        } catch (IOException e) {
            throw Refusal.unavailable(e.getMessage());
        }
        // A host reads its GPUs again: a lost card leaves a built gpu_map, which a job holding it refuses.
        GpuHost.Filled filled;
        try {
            filled = gpus.read(next);
        } catch (IOException e) {
            throw Refusal.refused(e.getMessage()); // not the hardware, or no NVML
        }
        next = filled.config();
        List<String> unchangeable = new ArrayList<>();
        if (!next.host().equals(config.host())) {
            unchangeable.add("host");
        }
        if (!next.complexes().equals(config.complexes())) {
            unchangeable.add("complexes");
        }
        if (!next.socket().equals(config.socket()) || !next.stateDir().equals(config.stateDir())
                || !next.deviceBackend().equals(config.deviceBackend())) {
            unchangeable.add("socket, state_dir or device_backend");
        }
        if (!next.cdi().equals(config.cdi())) {
            unchangeable.add("cdi or cdi_dir");
        }
        if (!next.attributes().equals(config.attributes()) || !next.attributeTypes().equals(config.attributeTypes())
                || !next.slots().equals(config.slots()) || !next.filter().equals(config.filter())
                || next.discover() != config.discover()) {
            unchangeable.add("attributes, attribute_types, slots, filter or discover");
        }
        if (!unchangeable.isEmpty()) {
            throw Refusal.refused("RELOAD changes complex_values and global_complex_values only; "
                    + String.join(", ", unchangeable) + " changed: restart rsmapd for that");
        }
        boolean changed = !next.complexValues().equals(s.hostValues())
                || !next.globalComplexValues().equals(s.globalValues());
        if (changed) {
            reconfigure(next.complexValues(), next.globalComplexValues());
            log.note(Log.Level.INFO, "RELOAD: configuration generation " + s.generation());
        }
        devices.reloaded(filled.gpus()); // the specs with the new devices=, MIG cards read again (a creation's taint stays)
        rsmap.realloc.Policy policy = rsmap.realloc.Policy.named(next.reallocPolicy()).orElseThrow();
        if (next.realloc() != s.reallocOn() || !policy.name().equals(s.reallocPolicy().name())) {
            changed = true; // a change the answer reports, though no new generation
            // Not a generation: what may be granted is the same; off answers every waiting realloc UNSUPPORTED.
            s.reallocSettings(next.realloc(), policy);
            s.reallocs().setPolicy(policy);
            List<rsmap.realloc.Event> answered = s.reallocs().setEnabled(next.realloc());
            reallocation.dispatch(answered);
            log.note(Log.Level.INFO, "RELOAD: realloc " + (s.reallocOn() ? "on" : "off") + ", realloc_policy "
                    + policy.name());
        }
        return List.of(Frame.of(tid, Code.STATE.value(), JSON.createObjectNode().put("generation", s.generation())
                .put("changed", changed).toString()));
    }

    /**
     * Puts every held grant, exactly, into {@code next} (a new configuration generation): what each job
     * uses and what it is to give back; empty when all fit, else which running job holds what {@code
     * next} cannot give back.
     */
    static Optional<String> restoreAll(HostState s, rsmap.realloc.Reallocs next) {
        for (Job j : s.jobs()) {
            rsmap.realloc.Outcome o;
            try {
                s.prepare(next.cluster(), j.id());
                o = next.restore(s.spec(j.id(), j.request(), j.slots()), j.grant(), j.releasing(), 0);
            } catch (ParseException e) {
                return Optional.of("running job " + j.id() + " holds: its request no longer parses: " + e.getMessage());
            }
            if (!o.ok()) {
                return Optional.of("running job " + j.id() + " holds: " + o.error());
            }
        }
        return Optional.empty();
    }
}
