// The Grid Engine jobs on Open Cluster Scheduler 9.1.4, built from the upstream source by .ci/build-ocs.sh.
// The map is a plain consumable in OCS (not OCS's own RSMAP type): OCS books amounts, rsmapd assigns the
// instances and sets SGE_HGR_* (docs/integration-ocs.md, "Who decides").
package rsmap.gridengine;

class OpenClusterSchedulerIT extends GridEngineIT {
    @Override
    Release release() {
        return Release.OCS_9_1;
    }
}
