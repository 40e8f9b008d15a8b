// scope= of a resource map request: over which instances a same= constraint holds.
package rsmap.request;

import java.util.Locale;

/**
 * Grid Engine's RSMAP manual, "How far the agreement reaches": HOST (the default) keeps agreement per host, JOB holds
 * every host of the job to one group.
 */
public enum Scope {
    HOST, JOB;

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
