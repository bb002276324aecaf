package hudiops.backport;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.hudi.common.table.HoodieTableMetaClient;
import org.apache.hudi.common.table.timeline.HoodieActiveTimeline;
import org.apache.hudi.common.table.timeline.HoodieInstant;
import org.apache.hudi.common.table.timeline.HoodieTimeline;
import org.apache.hudi.common.util.ClusteringUtils;
import org.apache.hudi.common.util.CollectionUtils;
import org.apache.hudi.common.util.Option;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hudi 1.1.1's prefer-writer conflict resolution, with one fix Hudi 1.2.0 made: a table service's
 * commit check takes the writes completed since its plan and the writes still in flight, and 1.1.1
 * sorts them all by completion time, which a write in flight does not have yet, so the check fails
 * with a NullPointerException whenever a write in flight is among two or more candidates: a
 * clustering could never commit beside a steady ingest. Here the completed writes come in completion
 * order and those in flight after them. Writers' own checks are Hudi's unchanged.
 * hudi_ops.spark.hudi_java builds this class against the 1.1.1 bundle and ships it only with
 * that release.
 */
public class PreferWriterConflictResolutionStrategy
    extends org.apache.hudi.client.transaction.PreferWriterConflictResolutionStrategy {

  private static final Logger LOG = LoggerFactory.getLogger(PreferWriterConflictResolutionStrategy.class);

  @Override
  public Stream<HoodieInstant> getCandidateInstants(
      HoodieTableMetaClient metaClient, HoodieInstant currentInstant, Option<HoodieInstant> lastSuccessfulInstant) {
    String action = currentInstant.getAction();
    if (HoodieTimeline.COMMIT_ACTION.equals(action) || HoodieTimeline.DELTA_COMMIT_ACTION.equals(action)) {
      return super.getCandidateInstants(metaClient, currentInstant, lastSuccessfulInstant);
    }
    HoodieActiveTimeline timeline = metaClient.reloadActiveTimeline();
    boolean tableService = HoodieTimeline.COMPACTION_ACTION.equals(action)
        || ClusteringUtils.isClusteringInstant(timeline, currentInstant, metaClient.getInstantGenerator());
    if (!tableService) {
      return super.getCandidateInstants(metaClient, currentInstant, lastSuccessfulInstant);
    }
    Stream<HoodieInstant> completed = timeline
        .getTimelineOfActions(CollectionUtils.createSet(HoodieTimeline.COMMIT_ACTION,
            HoodieTimeline.REPLACE_COMMIT_ACTION, HoodieTimeline.COMPACTION_ACTION, HoodieTimeline.DELTA_COMMIT_ACTION))
        .filterCompletedInstants()
        .findInstantsModifiedAfterByCompletionTime(currentInstant.requestedTime())
        .getInstantsOrderedByCompletionTime();
    Stream<HoodieInstant> inFlight = timeline
        .getTimelineOfActions(CollectionUtils.createSet(HoodieTimeline.COMMIT_ACTION, HoodieTimeline.DELTA_COMMIT_ACTION))
        .filterInflights()
        .getInstantsAsStream();
    List<HoodieInstant> candidates = Stream.concat(completed, inFlight).collect(Collectors.toList());
    LOG.info("Writes that may conflict with {}: {}", currentInstant, candidates);
    return candidates.stream();
  }
}
