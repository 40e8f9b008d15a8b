// What mig.json says at the places of the map of slices that a job holds: each slice's MIG UUID by place (the
// job's journal records), the names of a grow's added slices (ALLOC answers), the job's environment with its
// slices named, and its devices' capability nodes. Read over the host's checkpoint and settings (MigHost).
package rsmap.daemon.devices;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.alloc.Grant;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.JobId;

/** Readers only: nothing here creates, destroys or writes a slice ({@link MigHost} does). */
final class MigNames {
    /** What MIG's settings and checkpoint say now: read at each call (RELOAD and every creation change them). */
    public interface Source {
        /** The map of slices (mig_map), if one is set. */
        Optional<String> map();

        /** The checkpoint (mig.json) as open. */
        MigCheckpoint checkpoint();

        /** The variable that names a job's GPUs (gpu_env), if one is set. */
        Optional<String> gpuEnv();
    }

    private final Source host;

    MigNames(Source host) {
        this.host = host;
    }

    /**
     * The slice at each place of the map of slices that job {@code j} holds on {@code on} (granted, or taken
     * away and not released yet), by its MIG UUID ({@link #uuids}): what its journal records name ({@link
     * JournalRecord.Started}, {@code JournalRecord.Changed}).
     */
    Map<String, String> slices(Job j, String on) {
        if (host.map().isEmpty()) {
            return Map.of(); // a host without slices: the job start's path copies no grant
        }
        return uuids(j.id(), j.grant().plus(j.releasing()), on);
    }

    /**
     * The MIG UUID of the slice at each place of the map of slices that {@code job} holds in {@code held} on
     * {@code on}, as mig.json's created entry of the job names it; "" where it names none (a grow whose
     * creation failed).
     */
    Map<String, String> uuids(JobId job, Grant held, String on) {
        if (host.map().isEmpty()) {
            return Map.of();
        }
        String name = job.toString(); // as mig.json names it
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (String id : held.byHost().getOrDefault(on, Map.of()).getOrDefault(host.map().get(), List.of())) {
            out.put(id, host.checkpoint().uuidOf(name, id));
        }
        return out;
    }

    /** The job's environment with its slots as MIG UUIDs in SGE_HGR_MAP and the gpu_env variable. */
    Map<String, String> environment(Map<String, String> env) {
        if (host.map().isEmpty()) {
            return env;
        }
        Map<String, String> out = new java.util.LinkedHashMap<>(env);
        String key = "SGE_HGR_" + host.map().get();
        List<String> uuids = new ArrayList<>();
        String ids = env.getOrDefault(key, "").strip();
        if (!ids.isEmpty()) {
            List<String> named = new ArrayList<>();
            for (String id : ids.split(" +")) {
                String u = host.checkpoint().uuidOr(id);
                named.add(u);
                uuids.add(u);
            }
            out.put(key, String.join(" ", named));
        }
        host.gpuEnv().ifPresent(v -> {
            String cardsToo = out.getOrDefault(v, "");
            List<String> all = new ArrayList<>(cardsToo.isEmpty() ? List.of() : List.of(cardsToo.split(",")));
            all.addAll(uuids);
            out.put(v, String.join(",", all));
        });
        return out;
    }

    /** {@code instances} with each created slice's capability nodes added to its devices=. */
    List<rsmap.map.Instance> withCaps(List<rsmap.map.Instance> instances) {
        if (host.map().isEmpty()) {
            return instances;
        }
        List<rsmap.map.Instance> out = new ArrayList<>();
        for (rsmap.map.Instance i : instances) {
            Optional<MigCheckpoint.Entry> e = MigSlot.parse(i.id()).flatMap(host.checkpoint()::of);
            out.add(e.isPresent() && !e.get().caps().isEmpty() ? MigCaps.widened(i, e.get().caps()) : i);
        }
        return out;
    }

    /**
     * Each slot of {@code g} on {@code on} with a slice of {@code job}, to its MIG UUID (ALLOC answers and
     * events), or null.
     */
    com.fasterxml.jackson.databind.node.ObjectNode added(JobId job, Grant g, String on) {
        var n = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        uuids(job, g, on).forEach((id, uuid) -> {
            if (!uuid.isEmpty()) {
                n.put(id, uuid);
            }
        });
        return n.isEmpty() ? null : n;
    }
}
