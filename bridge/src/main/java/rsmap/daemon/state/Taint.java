// One taint of an instance (docs/health.md): who set it (NVML, the site's check, the admin, a failed MIG
// creation), why, and when.
package rsmap.daemon.state;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A tainted instance is never granted; the taint of {@code map}/{@code id} holds for every share of the
 * identifier. {@code reason} is one line (control characters are refused where it is read).
 */
public record Taint(String map, String id, Source source, String reason, Instant since) {
    /** The longest reason kept: one line of a status table. */
    public static final int MAX_REASON = 200;

    /**
     * Who tainted: in the order an instance with several taints shows them (the admin's first). MIG: NVML
     * refused to make a slice on the card (MigHost#create), set on the card's instances until undrained.
     */
    public enum Source {
        ADMIN, CHECK, NVML, MIG;

        /** As JSON and the journal write it: admin, check, nvml, mig. */
        public String text() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Optional<Source> of(String text) {
            for (Source s : values()) {
                if (s.text().equals(text)) {
                    return Optional.of(s);
                }
            }
            return Optional.empty();
        }
    }

    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneId.systemDefault());

    public Taint {
        Objects.requireNonNull(map, "map");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(since, "since");
    }

    /** What explanations and refusals show: {@code nvml: Xid 79 at 12:03:05} (the host's local time). */
    public String why() {
        return source.text() + ": " + (reason.isEmpty() ? "tainted" : reason) + " at " + CLOCK.format(since);
    }

    /** {@code {"source":"nvml","reason":"Xid 79","since":"2026-12-03T12:03:05Z"}}: an instance's health in QUERY. */
    ObjectNode json() {
        return JsonNodeFactory.instance.objectNode().put("source", source.text()).put("reason", reason)
                .put("since", since.toString());
    }
}
