// The threads behind an instance's health (docs/health.md): one waits for NVML's events of sick cards,
// one runs every health_interval the site's check and NVML's recheck of the cards it tainted.
package rsmap.daemon.health;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import rsmap.daemon.config.GpuSettings;
import rsmap.daemon.config.HealthSettings;
import rsmap.daemon.state.HostState;
import rsmap.daemon.state.Refusal;
import rsmap.daemon.state.Taint;
import rsmap.device.nvml.NvmlEvents;
import rsmap.log.Log;
import rsmap.log.LogBook;

/**
 * NVML's calls and the check run outside the daemon's lock; what they found is applied under it. A card's
 * event taints every instance of gpu_map behind it (those whose devices= name its /dev/nvidiaN, or whose
 * identifier is its UUID or, for a built map with gpu_id = index, its index). Every health_interval (and
 * at start) each card is rechecked ({@link NvmlEvents#sickness}): a sick one is tainted, and one tainted
 * from NVML at least one interval ago that NVML reports healthy is cleared.
 */
public final class HealthWatch implements AutoCloseable {
    /** How long one wait for an event lasts: {@link #close} waits twice that for the watcher to end. */
    static final int WAIT_MS = 500;
    private final HostState s;
    private final Health health;
    private final Object lock;
    private final LogBook log;
    private final HealthSettings settings;
    private final ScheduledExecutorService timer;
    private volatile NvmlEvents events;
    private volatile boolean running = true;
    private Thread watcher;

    public HealthWatch(HostState s, Health health, Object lock, LogBook log) {
        this.s = s;
        this.health = health;
        this.lock = lock;
        this.log = log;
        this.settings = s.config.health();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rsmapd-health");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts the watcher (where gpu_map is the host's NVIDIA cards) and the periodic check. NVML's recheck
     * runs once here, before the caller serves anything; the site's check runs first on the timer (its
     * own bound, health_timeout, is no wait of a start).
     */
    public HealthWatch start() {
        GpuSettings g = s.config.gpus();
        if (g.gpuMap().isPresent() && g.nvmlLibrary().isPresent() && s.devices.inventory().isPresent()) {
            try {
                events = NvmlEvents.open(g.nvmlLibrary().get());
                events.unregistered().forEach(l -> log.note(Log.Level.WARNING, "NVML events: " + l));
                if (events.watching()) {
                    log.note(Log.Level.INFO, "NVML events: watching " + events.registered().size() + " gpus");
                    watcher = new Thread(this::watch, "rsmapd-nvml-events");
                    watcher.setDaemon(true);
                    watcher.start();
                } else { // no watcher to free the session: close() does
                    log.note(Log.Level.WARNING, "NVML events: none; a sick card is noticed by the recheck only, every "
                            + "health_interval");
                }
            } catch (rsmap.device.nvml.NvmlException e) {
                log.note(Log.Level.WARNING, "NVML events: " + e.getMessage() + "; sick cards are not noticed");
            }
        }
        if (events != null) {
            try {
                recheck();
            } catch (RuntimeException x) {
                log.note(Log.Level.ERROR, "health check: " + x); // the timer's rounds try again
            }
        }
        if (events != null || settings.command().isPresent()) {
            timer.scheduleWithFixedDelay(this::round, 0, settings.interval(), TimeUnit.SECONDS);
        }
        return this;
    }

    private void watch() {
        NvmlEvents e = events;
        try {
            while (running) {
                Optional<NvmlEvents.Event> next = e.next(WAIT_MS);
                if (next.isPresent()) {
                    event(next.get());
                }
            }
        } catch (rsmap.device.nvml.NvmlException | RuntimeException x) {
            // The set stays open: its NVML session is the one the recheck asks, and closing it would make
            // every card read as "not found by NVML" and be tainted for good. close() frees it.
            log.note(Log.Level.ERROR, "NVML events: " + x.getMessage() + "; a sick card is noticed by the recheck "
                    + "only, every health_interval");
            return;
        }
        e.close(); // stopped: only this thread waits on the set, so it frees it
    }

    /** One event: an ignored Xid is logged; anything else taints the card's instances. */
    void event(NvmlEvents.Event e) {
        if (e.kind() == NvmlEvents.Kind.XID && settings.ignoredXids().contains(e.xid())) {
            log.note(Log.Level.INFO, "NVML: Xid " + e.xid() + " on " + e.uuid() + " is the application's fault "
                    + "(gpu_ignore_xids): nothing tainted");
            return;
        }
        List<String> cards = e.uuid().isEmpty() ? sickCards() : List.of(e.uuid());
        Instant now = Instant.now();
        synchronized (lock) {
            for (String uuid : cards) {
                String map = s.config.gpus().gpuMap().orElseThrow();
                for (String id : idsOf(uuid)) {
                    apply(() -> health.taint(new Taint(map, id, Taint.Source.NVML, e.reason(), now), false));
                }
            }
        }
    }

    /** The cards NVML does not report healthy now (after a GPU_IS_LOST that named none). */
    private List<String> sickCards() {
        List<String> out = new ArrayList<>();
        NvmlEvents e = events;
        if (e != null) {
            e.cards().forEach(uuid -> e.sickness(uuid).ifPresent(why -> out.add(uuid)));
        }
        return out;
    }

    /** One round: NVML's recheck, then the site's check. */
    private void round() {
        try {
            recheck();
            settings.command().ifPresent(this::check);
        } catch (RuntimeException x) {
            log.note(Log.Level.ERROR, "health check: " + x); // the next round runs all the same
        }
    }

    /**
     * Every card NVML named at start (registered for events or not), asked outside the lock: a sick one
     * without an NVML taint is tainted with what NVML says (so a restart learns again what the card is, and
     * a sickness no event told is seen); a healthy one whose NVML taints are at least one interval old is
     * cleared.
     */
    private void recheck() {
        NvmlEvents e = events;
        if (e == null) {
            return;
        }
        String map = s.config.gpus().gpuMap().orElseThrow();
        for (String uuid : e.cards()) { // a card registered for no event too: it is asked all the same
            Optional<String> sick = e.sickness(uuid);
            Instant now = Instant.now();
            Instant due = now.minus(Duration.ofSeconds(settings.interval()));
            synchronized (lock) {
                for (String id : idsOf(uuid)) {
                    Optional<Taint> t = s.health.of(map, id, Taint.Source.NVML);
                    if (sick.isPresent() && t.isEmpty()) {
                        apply(() -> health.taint(new Taint(map, id, Taint.Source.NVML, sick.get(), now), false));
                    } else if (sick.isEmpty() && t.isPresent() && !t.get().since().isAfter(due)) {
                        apply(() -> health.untaint(map, id, Taint.Source.NVML, false));
                    }
                }
            }
        }
    }

    private void check(Path command) {
        HealthCommand.Run run = HealthCommand.run(command, settings.timeout());
        run.failed().ifPresent(why -> log.note(Log.Level.WARNING, "health_command: " + why));
        run.skipped().forEach(l -> log.note(Log.Level.WARNING, "health_command: " + l + " (skipped)"));
        Instant now = Instant.now();
        synchronized (lock) {
            for (HealthCommand.Verdict v : run.verdicts()) {
                apply(() -> {
                    if (v.ok()) {
                        health.untaint(v.map(), v.id(), Taint.Source.CHECK, true);
                    } else {
                        health.taint(new Taint(v.map(), v.id(), Taint.Source.CHECK, v.reason(), now), true);
                    }
                });
            }
        }
    }

    private interface Change {
        void run() throws Refusal;
    }

    private void apply(Change c) {
        try {
            c.run();
        } catch (Refusal x) {
            log.note(Log.Level.WARNING, "health: " + x.getMessage() + "; nothing changed");
        }
    }

    /** The identifiers of gpu_map behind the card {@code uuid}, in configured order, each once (the card index). */
    List<String> idsOf(String uuid) {
        return s.devices.cardIds(uuid, s.cluster().hosts().get(s.host()));
    }

    @Override
    public void close() {
        running = false;
        timer.shutdownNow(); // a running check is interrupted: killed, nothing changed
        Thread w = watcher;
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS); // nothing of a round is written after the journal closes
            if (w != null) {
                w.join(2L * WAIT_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        NvmlEvents e = events;
        if (e != null && (w == null || !w.isAlive())) {
            e.close(); // none watched, or the watcher failed and left it to the recheck: nobody waits on it now
        }
    }
}
