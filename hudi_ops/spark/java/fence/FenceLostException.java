package hudiops.fence;

import org.apache.hudi.exception.HoodieException;

/** A write's batch fence was lost before the write could commit: another attempt may hold it now. */
public class FenceLostException extends HoodieException {
  public FenceLostException(String message) {
    super("hudi-ops fence lost: " + message);
  }
}
