package hudiops.write;

import java.util.HashMap;
import java.util.Map;
import java.util.function.BiConsumer;

import org.apache.hudi.HoodieSparkSqlWriter;
import org.apache.hudi.common.model.HoodieCommitMetadata;
import org.apache.hudi.common.table.HoodieTableMetaClient;
import org.apache.hudi.exception.HoodieException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;

import scala.Option;
import scala.Predef;
import scala.Tuple2;
import scala.Tuple6;
import scala.collection.JavaConverters;

/**
 * Hudi's Spark datasource write, as {@code df.write.format("hudi").options(o).mode("append").save(path)}
 * runs it, that also puts keys of the caller's own into the commit's extra metadata. The datasource
 * copies only the options that start with one prefix ({@code _} by default), and HoodieStreamer's
 * checkpoint keys ({@code streamer.checkpoint.key.v2}) share no prefix with hudi-ops' {@code _hudi_ops.*}
 * keys: so they go in through the writer's pre-commit function, which HoodieStreamingSink also uses,
 * and are committed with the data or not at all.
 */
public final class DatasourceWrite {
  private static final String INLINE_COMPACT = "hoodie.compact.inline";
  private static final String ASYNC_COMPACT = "hoodie.datasource.compaction.async.enable";
  private static final String TABLE_TYPE = "hoodie.datasource.write.table.type";

  private DatasourceWrite() {
  }

  public static void save(Dataset<Row> frame, String basePath, Map<String, String> options,
                          Map<String, String> commitMetadata) {
    Map<String, String> params = new HashMap<>(options);
    params.put("path", basePath);
    // Hudi gives a MERGE_ON_READ batch write inline compaction unless told otherwise, and a streaming
    // write (which the pre-commit function makes this one) none: keep the batch write's default
    if ("MERGE_ON_READ".equalsIgnoreCase(params.get(TABLE_TYPE)) && !params.containsKey(INLINE_COMPACT)
        && !params.containsKey(ASYNC_COMPACT)) {
      params.put(INLINE_COMPACT, "true");
    }
    Map<String, String> extra = new HashMap<>(commitMetadata);
    BiConsumer<HoodieTableMetaClient, HoodieCommitMetadata> addExtra = (meta, metadata) ->
        extra.forEach(metadata::addMetadata);
    HoodieSparkSqlWriter.StreamingWriteParams withExtra = new HoodieSparkSqlWriter.StreamingWriteParams(
        Option.empty(), Option.empty(), Option.empty(), Option.apply(addExtra));
    scala.collection.immutable.Map<String, String> scalaParams =
        JavaConverters.mapAsScalaMapConverter(params).asScala().toMap(Predef.<Tuple2<String, String>>$conforms());
    try {
      Tuple6<Object, ?, ?, ?, ?, ?> done = HoodieSparkSqlWriter.write(frame.sqlContext(), SaveMode.Append, scalaParams,
          frame, Option.apply(withExtra), Option.empty(), Option.empty());
      if (!(Boolean) done._1()) {
        throw new HoodieException("Failed to write to Hudi");
      }
    } finally {
      HoodieSparkSqlWriter.cleanup();
    }
  }
}
