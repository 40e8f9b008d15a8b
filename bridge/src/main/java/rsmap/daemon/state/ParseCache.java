// Requests and complex_values read against the complex table once per text: many jobs ask the same, a
// journal's replay asks again, and start-up checks the configuration's values that recovery then uses.
package rsmap.daemon.state;

import java.util.HashMap;
import java.util.Map;
import rsmap.Limits;
import rsmap.ParseException;
import rsmap.complex.ComplexTable;
import rsmap.map.ComplexValues;
import rsmap.request.RequestList;

/** Immutable values by their text; bounded (the few generations of late, the first 1,024 requests). */
final class ParseCache {
    private final ComplexTable table;
    private final Limits limits;
    private final Map<String, RequestList> requests = new HashMap<>();
    private final Map<String, ComplexValues> values = new HashMap<>();

    ParseCache(ComplexTable table, Limits limits) {
        this.table = table;
        this.limits = limits;
    }

    ComplexValues values(String text) throws ParseException {
        ComplexValues v = values.get(text);
        if (v == null) {
            v = ComplexValues.parse(text, table, limits);
            if (values.size() >= 8) {
                values.clear(); // generations come and go: keep the few of late
            }
            values.put(text, v);
        }
        return v;
    }

    RequestList request(String text) throws ParseException {
        RequestList parsed = requests.get(text);
        if (parsed == null) {
            parsed = RequestList.parse(text, table, limits);
            if (requests.size() < 1024) {
                requests.put(text, parsed);
            }
        }
        return parsed;
    }
}
