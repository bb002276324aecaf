package hudiops.fence;

import java.lang.reflect.Field;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.hudi.client.transaction.lock.BaseZookeeperBasedLockProvider;
import org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider;
import org.apache.hudi.common.config.LockConfiguration;
import org.apache.hudi.common.config.TypedProperties;
import org.apache.hudi.exception.HoodieException;
import org.apache.hudi.storage.StorageConfiguration;
import org.apache.zookeeper.data.Stat;

/**
 * Hudi's ZooKeeper lock, which also checks a hudi-ops batch fence each time it is taken. A job that
 * writes a batch (an ingest's files, a backfill's day) holds the batch's fence, an ephemeral node of
 * its Python driver's ZooKeeper session, so that a second attempt of the batch waits. Hudi takes the
 * table's lock to start the write and again to commit it: when the fence's node is gone or belongs
 * to another session by then (the session expired in a ZooKeeper outage or a long pause, and another
 * attempt may hold the fence now), the write fails instead of committing blind, and nothing of it
 * becomes visible. Without the fence's options it is Hudi's lock unchanged.
 * hudi_ops.spark.hudi_java builds this class against the chosen Hudi bundle.
 */
public class FencedZookeeperLockProvider extends ZookeeperBasedLockProvider {

  public static final String FENCE_PATH = "hoodie.write.lock.hudi_ops.fence.path";
  public static final String FENCE_SESSION = "hoodie.write.lock.hudi_ops.fence.session";

  private final String fencePath;
  private final long fenceSession;
  private final transient CuratorFramework client;

  public FencedZookeeperLockProvider(LockConfiguration lockConfiguration, StorageConfiguration<?> conf) {
    super(lockConfiguration, conf);
    TypedProperties props = lockConfiguration.getConfig();
    this.fencePath = props.getString(FENCE_PATH, null);
    String session = props.getString(FENCE_SESSION, null);
    this.fenceSession = session == null ? 0L : Long.parseLong(session.trim());
    this.client = fencePath == null ? null : lockClient();
  }

  @Override
  public boolean tryLock(long time, TimeUnit unit) {
    boolean acquired = super.tryLock(time, unit);
    if (acquired && fencePath != null) {
      String lost = whyFenceIsLost();
      if (lost != null) {
        unlock();
        // not a HoodieLockException, which Hudi's lock manager would retry: a lost fence stays lost
        throw new FenceLostException(lost);
      }
    }
    return acquired;
  }

  private String whyFenceIsLost() {
    Stat stat;
    try {
      stat = client.checkExists().forPath(fencePath);
    } catch (Exception e) {
      return "the batch's fence " + fencePath + " could not be read (" + e + ")";
    }
    if (stat == null) {
      return "the batch's fence " + fencePath + " is gone: its ZooKeeper session ended";
    }
    if (stat.getEphemeralOwner() != fenceSession) {
      return "the batch's fence " + fencePath + " belongs to ZooKeeper session 0x"
          + Long.toHexString(stat.getEphemeralOwner()) + ", not this job's 0x" + Long.toHexString(fenceSession);
    }
    return null;
  }

  /** The lock's own ZooKeeper client, which Hudi keeps private (in 1.1.1 and 1.2.0 alike). */
  private CuratorFramework lockClient() {
    try {
      Field field = BaseZookeeperBasedLockProvider.class.getDeclaredField("curatorFrameworkClient");
      field.setAccessible(true);
      return (CuratorFramework) field.get(this);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new HoodieException("hudi-ops' fenced lock cannot reach the ZooKeeper client of this Hudi's "
          + "BaseZookeeperBasedLockProvider (" + e + "); run the Hudi release hudi-ops builds its classes for", e);
    }
  }
}
