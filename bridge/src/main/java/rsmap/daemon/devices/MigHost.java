// A host's slices on demand (docs/gpus.md, "Partitions on demand"): mig_map built from NVML, the
// exclusions that make a card one pool (MigExclusions), slices created at JOB_START and destroyed at
// JOB_END, orphans destroyed at start-up and in reconciliation, the job's environment and capability nodes.
package rsmap.daemon.devices;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import rsmap.alloc.Exclusions;
import rsmap.alloc.Grant;
import rsmap.complex.ComplexTable;
import rsmap.daemon.config.Config;
import rsmap.daemon.config.GpuSettings;
import rsmap.daemon.config.MigSettings;
import rsmap.daemon.state.Job;
import rsmap.daemon.state.Refusal;
import rsmap.device.nvml.Mig;
import rsmap.device.nvml.MigCard;
import rsmap.device.nvml.NvmlException;
import rsmap.log.Log;
import rsmap.log.LogBook;
import rsmap.map.ComplexValues;
import rsmap.daemon.state.JobId;

/**
 * Mutable, under the daemon's lock. Every creation is journaled in {@link MigCheckpoint} before NVML is asked
 * (state {@code creating}) and after ({@code created}); an entry goes once its slice is destroyed. A slice NVML reports
 * that the checkpoint does not name is an admin's: left alone, and what it occupies counts as used.
 */
public final class MigHost implements MigNames.Source {
    private final LogBook log;
    private final Path checkpointFile;
    /** What mig.json names at a job's places: its records' slices, its environment, its ALLOC's names. */
    final MigNames names = new MigNames(this);
    private MigCheckpoint checkpoint;
    private MigSettings settings = MigSettings.defaults();
    private GpuSettings gpu = GpuSettings.defaults();
    private Optional<Mig> nvml = Optional.empty();
    /** The GPU layer of the configuration last read: NVML's inventory and the card index over gpu_map. */
    private GpuHost gpus = GpuHost.NONE;
    /** The cards as NVML last reported them (at start, RELOAD and each reconciliation). */
    private List<MigCard> cards = List.of();
    /** Called after the slices or the cards as read changed (HostState#changed: QUERY's kept answers go). */
    private Runnable changed = () -> { };
    /** Told of a creation NVML refused (Health#creationFailed: the card's taint, source mig). */
    private Failed failed = (card, reason) -> { };

    /** Where a failed creation goes: the host's health model, which taints the card's instances. */
    public interface Failed {
        /** NVML refused to make a slice on card {@code card}, for {@code reason} (its error, one line). */
        void creation(MigCard card, String reason);
    }

    public MigHost(Path stateDir, LogBook log) {
        this.log = log;
        this.checkpointFile = stateDir.resolve("mig.json");
    }

    /** What to call when the slices (or the cards as NVML reported them) change. */
    void onChange(Runnable changed) {
        this.changed = changed;
    }

    /** What to tell of a creation NVML refused. */
    public void onFailedCreation(Failed failed) {
        this.failed = failed;
    }

    /** An authority's: no slices. */
    public static MigHost none() {
        return new MigHost(Path.of("/nonexistent"), new LogBook());
    }

    /** What a read of the configuration changes here ({@link #reader}), as it was before it. */
    record Before(MigSettings settings, GpuSettings gpu, Optional<Mig> nvml, GpuHost gpus,
                  List<MigCard> cards) {
    }

    /** The state a RELOAD's read is about to change: put back with {@link #restore} when the RELOAD is refused. */
    Before before() {
        return new Before(settings, gpu, nvml, gpus, cards);
    }

    /** A refused RELOAD changes nothing here: the settings and cards of before it. */
    void restore(Before b) {
        settings = b.settings();
        gpu = b.gpu();
        nvml = b.nvml();
        gpus = b.gpus();
        cards = b.cards();
    }

    /** {@code inner}, with mig_map built into complex_values where rsmapd.conf sets it. */
    public GpuHost.Reader reader(GpuHost.Reader inner, ComplexTable table, Path file) {
        return config -> fill(inner.read(config), table, file);
    }

    private GpuHost.Filled fill(GpuHost.Filled f, ComplexTable table, Path file) throws IOException {
        Config config = f.config();
        settings = config.gpus().mig();
        gpu = config.gpus();
        if (settings.map().isEmpty()) {
            return f;
        }
        String map = settings.map().get();
        String at = (file == null ? "rsmapd.conf" : file.toString()) + (config.lineOf("mig_map") > 0 ? ": line "
                + config.lineOf("mig_map") : "") + ": mig_map";
        if (table.find(map).filter(c -> c.name().equals(map) && c.isResourceMap()).isEmpty()) {
            throw new IOException(at + ": '" + map + "' is not a resource map (type RSMAP) of the complex table "
                    + config.complexes());
        }
        String text = config.complexValues().strip();
        try {
            // the admin's values as the GPU layer read them (gpu_map's entry, if built, is not the map of slices)
            ComplexValues written = f.written().isPresent() ? f.written().get() : ComplexValues.parse(text, table);
            if (written.resourceMap(map).isPresent()) {
                throw new IOException(at + ": complex_values writes " + map + ", which is built from NVML: remove it");
            }
        } catch (rsmap.ParseException e) {
            return f; // Preflight says where
        }
        if (f.gpus().inventory().isEmpty() || gpu.nvmlLibrary().isEmpty()) {
            throw new IOException(at + ": " + map + " is built from NVML, and there is none (nvml_library = "
                    + gpu.nvmlLibrary().orElse("off") + ")");
        }
        try {
            if (checkpoint == null) {
                checkpoint = MigCheckpoint.open(checkpointFile);
            }
            nvml = Optional.of(Mig.load(gpu.nvmlLibrary().get()));
            cards = nvml.get().read();
        } catch (NvmlException e) {
            throw new IOException(at + ": " + e.getMessage());
        }
        gpus = f.gpus();
        String entry = MigMap.entry(map, cards, gpus.inventory().get(), table, gpu.devDir());
        log.note(Log.Level.INFO, "MIG: " + cards.stream().filter(MigCard::enabled).count() + " cards with MIG on, "
                + MigMap.slots(cards).size() + " placements in " + map);
        return new GpuHost.Filled(config.withComplexValues(text.equalsIgnoreCase("NONE") || text.isEmpty() ? entry
                : text + "," + entry), f.gpus());
    }

    /** The checkpoint (mig.json) as open; readers of it by place: {@link #names}. */
    @Override
    public MigCheckpoint checkpoint() {
        return checkpoint;
    }

    /** The variable that names a job's GPUs (gpu_env), if one is set. */
    @Override
    public Optional<String> gpuEnv() {
        return gpu.env();
    }

    /** The map of slices, if one is configured. */
    @Override
    public Optional<String> map() {
        return nvml.isPresent() ? settings.map() : Optional.empty();
    }

    /** The card as one pool ({@link MigExclusions}), over the cards as last read (this daemon's one host). */
    Exclusions exclusions(ComplexValues values) {
        if (map().isEmpty()) {
            return Exclusions.NONE;
        }
        return MigExclusions.of(map().get(), cards, values, c -> wholeCard(c, values), this::ours);
    }

    /**
     * The instances of {@code values} a failed creation's taint of card {@code c} sits on (docs/health.md,
     * source mig): its whole-card instances of gpu_map, whose taint takes its slices out too (they exclude
     * each other); where gpu_map has none of it, each of its places in mig_map.
     */
    List<Exclusions.Key> cardInstances(MigCard c, ComplexValues values) {
        List<Exclusions.Key> whole = wholeCard(c, values);
        if (!whole.isEmpty() || map().isEmpty()) {
            return whole;
        }
        String m = map().get();
        return values.resourceMap(m).map(r -> r.instances().stream().map(rsmap.map.Instance::id).distinct()
                .filter(id -> MigSlot.parse(id).filter(x -> x.card() == c.index()).isPresent())
                .map(id -> new Exclusions.Key(m, id)).toList()).orElse(List.of());
    }

    /** The gpu_map instances of card {@code c} in {@code values}, by the card index ({@link CardIndex}). */
    private List<Exclusions.Key> wholeCard(MigCard c, ComplexValues values) {
        if (gpu.gpuMap().isEmpty()) {
            return List.of();
        }
        String g = gpu.gpuMap().get();
        return gpus.cards(values).ids(c.uuid()).stream().map(id -> new Exclusions.Key(g, id)).toList();
    }

    /** Whether slice {@code x} of {@code c} is one rsmapd made (the checkpoint names it, in any state). */
    boolean ours(MigCard c, MigCard.Slice x) {
        return checkpoint != null && checkpoint.entries().stream().anyMatch(e -> e.card().equals(c.uuid())
                && (e.gi() == x.gi() || e.gi() < 0 && e.slot().start() == x.placement().start()
                && e.slot().profile().equals(x.profile())));
    }

    /**
     * Creates the slices {@code grant} gives job {@code job} on {@code host}, each journaled before and after.
     * A failure destroys what this call made, is refused BUSY (the job is rescheduled) naming NVML's error,
     * and, where NVML refused, is told ({@link #onFailedCreation}: the card is tainted).
     */
    void create(JobId jobId, Grant grant, String host) throws Refusal {
        if (map().isEmpty()) {
            return;
        }
        String job = jobId.toString(); // as mig.json names it
        List<String> ids = grant.byHost().getOrDefault(host, Map.of()).getOrDefault(map().get(), List.of());
        java.util.Set<MigSlot> made = new java.util.LinkedHashSet<>();
        for (String id : ids) {
            MigSlot slot = MigSlot.parse(id).orElseThrow(); // the map's ids are slots (MigMap)
            Optional<MigCard> card = MigMap.card(cards, slot.card());
            if (card.isEmpty()) {
                made.forEach(x -> destroySlot(x, "creation failed"));
                throw Refusal.busy("job " + job + ": slice " + slot + " cannot be created: "
                        + "NVML no longer reports card " + slot.card());
            }
            MigCard c = card.get();
            MigCheckpoint.Entry intent = new MigCheckpoint.Entry(job, slot, c.uuid(), "creating", -1, -1, "", List.of());
            try {
                checkpoint.put(intent);
                changed.run();
                MigCard.Slice s = nvml.get().create(c.uuid(), slot.profile(), slot.start());
                made.add(slot); // from here a failure destroys it (the intent finds it by its place)
                List<String> caps = MigCaps.nodes(settings.capsFile(), gpu.devDir(), c.minor(), s.gi(), s.ci().orElse(0));
                checkpoint.put(new MigCheckpoint.Entry(job, slot, c.uuid(), "created", s.gi(), s.ci().orElse(0),
                        s.uuid().orElse(""), caps));
                changed.run();
                log.note(Log.Level.INFO, "job " + job + ": slice " + slot + " created: " + s.uuid().orElse("")
                        + " (gi " + s.gi() + ")");
            } catch (NvmlException | IOException e) {
                if (!made.contains(slot)) {
                    // Nothing made here (Mig.create destroys what it made before it throws): a slice at this
                    // place now is not rsmapd's - an admin's, made since the card was last read - and stays.
                    forget(slot);
                }
                made.forEach(x -> destroySlot(x, "creation failed"));
                if (e instanceof NvmlException) {
                    failed.creation(c, "slice " + slot + " cannot be created: " + e.getMessage());
                }
                throw Refusal.busy("job " + job + ": slice " + slot + " cannot be created: "
                        + e.getMessage());
            }
        }
    }

    /** The intent to create {@code slot} dropped, with nothing destroyed: the creation made nothing. */
    private void forget(MigSlot slot) {
        try {
            checkpoint.remove(slot);
            changed.run();
        } catch (IOException x) {
            // the entry stays "creating": start-up and reconciliation look for a slice at its place
            log.note(Log.Level.WARNING, "slice " + slot + ": its intent cannot be dropped from the checkpoint: "
                    + x.getMessage());
        }
    }

    /** Destroys the slices of {@code job} (after its policy was narrowed); a failure is logged and retried later. */
    void destroy(JobId id) {
        if (checkpoint == null) {
            return;
        }
        String job = id.toString(); // as mig.json names it
        checkpoint.entries().stream().filter(e -> e.job().equals(job)).forEach(e -> destroySlot(e.slot(), "job " + job
                + " ended"));
    }

    /** Destroys the slices of {@code job} that {@code holds} (on {@code host}) no longer names: a RELEASE. */
    void destroyReleased(JobId id, Grant holds, String host) {
        if (map().isEmpty()) {
            return;
        }
        String job = id.toString(); // as mig.json names it
        List<String> kept = holds.byHost().getOrDefault(host, Map.of()).getOrDefault(map().get(), List.of());
        checkpoint.entries().stream().filter(e -> e.job().equals(job) && !kept.contains(e.slot().toString()))
                .forEach(e -> destroySlot(e.slot(), "released by job " + job));
    }

    /** The slices rsmapd made on {@code slots}' places, destroyed: the entry marked, NVML asked, the entry gone. */
    private void destroySlot(MigSlot slot, String why) {
        Optional<MigCheckpoint.Entry> e = checkpoint.of(slot);
        if (e.isEmpty()) {
            return;
        }
        try {
            // No mark before: the job's end (or release) is journaled already, so after a crash here the entry
            // names a slice no job holds, and start-up destroys it.
            int gi = e.get().gi();
            if (gi < 0) {
                // Asked to create, no answer kept: the slice at its place is ours if NVML has one there.
                gi = MigMap.slice(nvml.get().read(), slot).map(MigCard.Slice::gi).orElse(-1);
            }
            if (gi >= 0) {
                nvml.get().destroy(e.get().card(), gi);
            }
            checkpoint.remove(slot);
            changed.run();
            log.note(Log.Level.INFO, "slice " + slot + (gi >= 0 ? " destroyed (" : " was not made (") + why + ")");
        } catch (NvmlException | IOException x) {
            log.note(Log.Level.WARNING, "slice " + slot + " of job " + e.get().job() + " not destroyed: " + x.getMessage()
                    + " (tried again at the next reconciliation)");
        }
    }

    /**
     * Start-up, before {@link #reconcile}: the checkpoint made to agree with the journal where it lost track
     * ({@link MigRepair#adopt}). Returns each job at whose places an entry was adopted or dropped, whose
     * environment is to be made again from the checkpoint as it is now.
     */
    Set<JobId> adopt(java.util.Collection<Job> held, String host,
                      java.util.function.Function<JobId, Map<String, String>> journaled,
                      java.util.function.Function<JobId, Map<String, String>> told) {
        if (map().isEmpty()) {
            return Set.of();
        }
        return new MigRepair(checkpoint, log, changed).adopt(held, host, map().get(), cards, journaled, told,
                (c, x) -> MigCaps.nodes(settings.capsFile(), gpu.devDir(), c.minor(), x.gi(), x.ci().orElse(0)));
    }

    /**
     * Start-up and reconciliation: slices rsmapd made that no job in {@code held} holds are destroyed, the held
     * ones kept; NVML is read again (an admin's slices count as used from here on).
     */
    void reconcile(Set<JobId> held) {
        if (map().isEmpty()) {
            return;
        }
        List<MigCard> now = null;
        try {
            now = nvml.get().read();
        } catch (NvmlException e) {
            log.note(Log.Level.WARNING, "MIG: " + e.getMessage());
        }
        MigRepair repair = new MigRepair(checkpoint, log, changed);
        boolean destroyed = false;
        for (MigCheckpoint.Entry e : checkpoint.entries()) {
            if ((!JobId.parse(e.job()).filter(held::contains).isPresent() || !e.state().equals("created")) && (now == null || repair.stillThere(e, now))) {
                destroySlot(e.slot(), "no job holds it");
                destroyed = true;
            }
        }
        if (now != null && !destroyed) {
            cards = now; // as read above: nothing changed since
            changed.run(); // an admin's slices made or destroyed meanwhile
            return;
        }
        try {
            cards = nvml.get().read();
            changed.run(); // an admin's slices made or destroyed meanwhile
        } catch (NvmlException e) {
            log.note(Log.Level.WARNING, "MIG: " + e.getMessage());
        }
    }

    /** The job holding a whole-card instance of {@code c} in gpu_map ("" when none), of {@code values}. */
    String wholeCardHolder(MigCard c, Map<String, List<Map.Entry<String, String>>> holders, ComplexValues values) {
        if (gpu.gpuMap().isEmpty()) {
            return "";
        }
        List<String> ids = gpus.cards(values).ids(c.uuid());
        return holders.getOrDefault(gpu.gpuMap().get(), List.of()).stream()
                .filter(e -> ids.contains(e.getKey()) && !e.getValue().isEmpty()).map(Map.Entry::getValue).findFirst()
                .orElse("");
    }

    /** The cards as last read. */
    List<MigCard> cards() {
        return cards;
    }

    /** The slices rsmapd made, as the checkpoint holds them (QUERY's view, {@code Views#mig}). */
    List<MigCheckpoint.Entry> slices() {
        return map().isEmpty() ? List.of() : checkpoint.entries();
    }
}
