// Generates simulate scripts for the benchmarks: a busy cluster of shared GPUs with a steady stream of
// submits, finishes, reservations and queries.
package rsmap.bench;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;

final class Scripts {
    private static final String[] REQUESTS = {"gpu=1", "gpu=2", "gpu=4[same=id]", "gpu=1[memory=64G]",
        "gpu=2[same=numa_node]", "gpu=1[id=g1*]", "gpu=1,lic=1", "gpu=2[same=id,scope=job]"};

    private Scripts() {
    }

    /**
     * {@code ops} operations over 16 hosts of 32 instances each, deterministic for a seed: {@code submits}
     * percent submits, 95 - submits percent finishes (mostly the oldest job, some the newest, which may
     * withdraw a waiting one), 5% env and explain. At 47 a busy cluster keeps a queue of up to ~100 jobs;
     * at 48 it is oversubscribed and the queue grows past a thousand.
     */
    static String replay(int ops, long seed, int submits) {
        Random rnd = new Random(seed);
        StringBuilder b = new StringBuilder();
        int hosts = 16;
        for (int h = 0; h < hosts; h++) {
            StringBuilder v = new StringBuilder("gpu=32(");
            for (int card = 0; card < 8; card++) {
                for (int share = 0; share < 4; share++) {
                    v.append(card + share == 0 ? "" : " ").append('g').append(card).append("[memory=")
                            .append(card % 2 == 0 ? "80G" : "40G").append(",numa_node=").append(card % 2).append(']');
                }
            }
            v.append(')');
            b.append("{\"op\":\"host\",\"host\":\"n").append(h).append("\",\"complex_values\":\"").append(v)
                    .append("\",\"time\":0}\n");
        }
        b.append("{\"op\":\"host\",\"host\":\"global\",\"complex_values\":\"lic=64\"}\n");
        Deque<String> live = new ArrayDeque<>();
        List<String> all = new ArrayList<>();
        long time = 0;
        int written = hosts + 1;
        int job = 0;
        while (written < ops) {
            time += rnd.nextInt(3);
            int what = rnd.nextInt(100);
            if (what < submits || live.isEmpty()) {
                String id = "j" + job++;
                int h = rnd.nextInt(hosts);
                String hostsJson = rnd.nextInt(8) == 0
                        ? "{\"n" + h + "\":1,\"n" + ((h + 1) % hosts) + "\":1}" : "{\"n" + h + "\":1}";
                b.append("{\"op\":\"submit\",\"job\":\"").append(id).append("\",\"request\":\"")
                        .append(REQUESTS[rnd.nextInt(REQUESTS.length)]).append("\",\"hosts\":").append(hostsJson)
                        .append(",\"time\":").append(time).append(",\"runtime\":").append(50 + rnd.nextInt(500))
                        .append(rnd.nextInt(10) == 0 ? ",\"reserve\":true" : "").append("}\n");
                live.add(id);
                all.add(id);
            } else if (what < 95) {
                String id = rnd.nextInt(4) == 0 ? live.pollLast() : live.pollFirst();
                b.append("{\"op\":\"finish\",\"job\":\"").append(id).append("\",\"time\":").append(time).append("}\n");
            } else if (what < 97) {
                b.append("{\"op\":\"env\",\"job\":\"").append(all.get(rnd.nextInt(all.size()))).append("\",\"host\":\"n")
                        .append(rnd.nextInt(hosts)).append("\"}\n");
            } else {
                b.append("{\"op\":\"explain\",\"request\":\"gpu=4[same=id]\",\"host\":\"n").append(rnd.nextInt(hosts))
                        .append("\"}\n");
            }
            written++;
        }
        return b.toString();
    }
}
