package hudiops.validate;

import org.apache.hudi.client.WriteStatus;
import org.apache.hudi.common.data.HoodieData;
import org.apache.hudi.common.engine.HoodieEngineContext;
import org.apache.hudi.config.HoodieWriteConfig;
import org.apache.hudi.exception.HoodieValidationException;
import org.apache.hudi.table.HoodieSparkTable;
import org.apache.spark.sql.SQLContext;

/** Hudi's SqlQuerySingleResultPreCommitValidator, whose refusal names itself and its query (PreCommitValidationFailed). */
public class SqlQuerySingleResultPreCommitValidator<T, I, K, O extends HoodieData<WriteStatus>>
    extends org.apache.hudi.client.validator.SqlQuerySingleResultPreCommitValidator<T, I, K, O> {

  public SqlQuerySingleResultPreCommitValidator(HoodieSparkTable<T> table, HoodieEngineContext context,
                                            HoodieWriteConfig config) {
    super(table, context, config);
  }

  @Override
  protected void validateUsingQuery(String query, String before, String after, SQLContext sql) {
    try {
      super.validateUsingQuery(query, before, after, sql);
    } catch (HoodieValidationException e) {
      throw new PreCommitValidationFailed("SqlQuerySingleResultPreCommitValidator", e);
    }
  }
}
