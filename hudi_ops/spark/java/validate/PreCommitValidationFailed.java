package hudiops.validate;

import org.apache.hudi.exception.HoodieException;

/**
 * One of Hudi's SQL pre-commit validators refused a commit. Hudi's own HoodieValidationException says
 * only that one failed (its runner logs which and keeps the boolean); this one carries the validator
 * and Hudi's message, which names the query, up the write's cause chain to the job.
 */
public class PreCommitValidationFailed extends HoodieException {
  public PreCommitValidationFailed(String validator, Throwable refusal) {
    super(validator + ": " + refusal.getMessage(), refusal);
  }
}
