// The daemon benchmarks of the daemon and its protocol in one run: round trips, RSS with 10,000 grants, start-up to READY.
package rsmap.bench;

public final class All {
    private All() {
    }

    public static void main(String[] args) throws Exception {
        RoundTrip.main(new String[0]);
        System.out.println();
        GrantRss.main(new String[0]);
        System.out.println();
        StartupToReady.main(new String[0]);
    }
}
