// The child process of JournalTest's kill loops: appends numbered records (compacting now and then, or
// forcing ahead on the journal's thread, or starting the kernel's write-back and compacting) and
// acknowledges each one on stdout only after append returned, until it is killed.
package rsmap.journal;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public final class JournalWriter {
    private JournalWriter() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 1 ? args[1] : "append";
        boolean writeback = mode.equals("writeback"); // the kernel's write-back started, compacting now and then
        boolean compacting = mode.equals("compact") || writeback;
        boolean ahead = mode.equals("ahead") || writeback;
        // "ahead": forced ahead on the journal's own thread (a platform without sync_file_range)
        try (Journal j = Journal.open(Path.of(args[0]), writeback)) {
            List<String> all = new ArrayList<>(j.replayed());
            for (int i = all.size(); ; i++) {
                String r = "r" + i + " " + "x".repeat(i % 97); // records of varying length
                if (ahead) { // the daemon's job path: written, forced ahead, then synced
                    j.write(r);
                    j.forceSoon();
                    j.sync();
                } else {
                    j.append(r);
                }
                all.add(r);
                if (compacting && i % 25 == 0) {
                    j.compact(all);
                }
                System.out.println("ack " + i);
                System.out.flush();
            }
        }
    }
}
