// Why a profile does or does not fit on the host's MIG cards, for rsmap explain: per card and profile,
// the placements free, or what holds the card ("3g.40gb: no placement free: 4 of 7 compute slices held").
package rsmap.daemon.devices;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import rsmap.daemon.state.HostHealth;
import rsmap.device.nvml.MigCard;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

/** Only for requests that name the map of slices; nothing otherwise. */
final class MigExplain {
    private MigExplain() {
    }

    /**
     * Lines to append to the explanation of {@code request}, given who holds each instance of the host
     * ({@code values} as configured, their {@code health}); {@code shown} is how a job's id may be shown to
     * the asker.
     */
    static String text(MigHost mig, HostHealth health, ComplexValues values, RequestList request,
                       Map<String, List<Map.Entry<String, String>>> holders, java.util.function.UnaryOperator<String> shown) {
        if (mig.map().isEmpty() || request.resourceRequests().stream().noneMatch(r -> r.name().equals(mig.map().get()))) {
            return "";
        }
        List<Map.Entry<String, String>> slots = holders.getOrDefault(mig.map().get(), List.of());
        StringBuilder b = new StringBuilder("MIG cards:\n");
        for (MigCard c : mig.cards()) {
            if (!c.enabled()) {
                b.append("  card ").append(c.index()).append(" (").append(c.uuid()).append("): MIG mode off\n");
                continue;
            }
            List<MigCard.Placement> taken = new ArrayList<>();
            int held = 0;
            for (Map.Entry<String, String> e : slots) {
                MigSlot s = MigSlot.parse(e.getKey()).orElse(null);
                if (s != null && s.card() == c.index() && !e.getValue().isEmpty()) {
                    MigCard.Profile p = c.profile(s.profile()).orElseThrow();
                    taken.add(p.placements().stream().filter(x -> x.start() == s.start()).findFirst().orElseThrow());
                    held += p.slices();
                }
            }
            for (MigCard.Slice x : c.slices()) {
                if (taken.stream().noneMatch(t -> t.equals(x.placement()))) {
                    taken.add(x.placement());
                    held += c.profile(x.profile()).map(MigCard.Profile::slices).orElse(1);
                }
            }
            int total = c.profiles().stream().mapToInt(MigCard.Profile::slices).max().orElse(0);
            String wholeHolder = mig.wholeCardHolder(c, holders, values);
            b.append("  card ").append(c.index()).append(" (").append(c.uuid()).append(")")
                    .append(mig.cardInstances(c, values).stream().map(k -> health.shown(k.map(), k.id()))
                            .flatMap(Optional::stream).findFirst().map(t -> ": tainted: " + t.why()).orElse(""))
                    .append(wholeHolder.isEmpty() ? "" : ": the whole card is held by job " + shown.apply(wholeHolder)).append('\n');
            for (MigCard.Profile p : c.profiles()) {
                long free = p.placements().stream().filter(at -> taken.stream().noneMatch(at::overlaps)).count();
                b.append("    ").append(p.name()).append(": ").append(free > 0 && wholeHolder.isEmpty()
                        ? free + " of " + p.placements().size() + " placements free"
                        : "no placement free: " + held + " of " + total + " compute slices held").append('\n');
            }
        }
        return b.toString();
    }
}
