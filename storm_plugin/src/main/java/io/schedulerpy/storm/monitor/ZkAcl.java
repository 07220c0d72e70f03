package io.schedulerpy.storm.monitor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.org.apache.zookeeper.ZooDefs;
import org.apache.storm.shade.org.apache.zookeeper.data.ACL;
import org.apache.storm.shade.org.apache.zookeeper.data.Id;
import org.apache.storm.utils.ZookeeperAuthInfo;

/**
 * The digest credential and ACL of the monitoring znodes, the Java side of
 * {@code scheduler_py/monitoring/zk_acl.py} (which says why writes are restricted). With
 * {@code scheduler.monitor.zk.digest.file} set to a file holding one line {@code user:password},
 * the worker monitor's ZooKeeper client authenticates with it and creates every znode (parents
 * included) writable only with it; {@code scheduler.monitor.zk.world.read} (default true) keeps
 * READ for {@code world:anyone}.
 */
final class ZkAcl {
    static final String DIGEST_FILE = "scheduler.monitor.zk.digest.file";
    static final String WORLD_READ = "scheduler.monitor.zk.world.read";

    private final String credential;
    private final boolean worldRead;

    ZkAcl(String credential, boolean worldRead) {
        this.credential = credential;
        this.worldRead = worldRead;
    }

    /**
     * The configured ACL, or null when no digest file is set.
     *
     * @throws IllegalStateException when the file cannot be read or holds no {@code user:password}
     */
    static ZkAcl fromConf(Map<String, Object> conf) {
        Object file = conf.get(DIGEST_FILE);
        if (file == null || file.toString().isBlank()) {
            return null;
        }
        String line;
        try {
            List<String> lines = Files.readAllLines(Path.of(file.toString()), StandardCharsets.UTF_8);
            line = lines.isEmpty() ? "" : lines.get(0).strip();
        } catch (IOException e) {
            throw new IllegalStateException(DIGEST_FILE + "=" + file + ": cannot read the ZooKeeper credential ("
                + e + "); expected a file holding one line user:password", e);
        }
        int colon = line.indexOf(':');
        if (colon <= 0 || colon == line.length() - 1) {
            throw new IllegalStateException(DIGEST_FILE + "=" + file + ": expected one line user:password, found "
                + (line.isEmpty() ? "an empty file" : "no user or no password"));
        }
        Object world = conf.get(WORLD_READ);
        return new ZkAcl(line, world == null || Boolean.parseBoolean(world.toString()));
    }

    /** {@code addauth digest user:password} on every (re)connection. */
    ZookeeperAuthInfo auth() {
        return new ZookeeperAuthInfo("digest", credential.getBytes(StandardCharsets.UTF_8));
    }

    /** Every permission for the credential, READ for the world when allowed. */
    List<ACL> acl() {
        List<ACL> acl = new ArrayList<>();
        acl.add(new ACL(ZooDefs.Perms.ALL, new Id("digest", digestId(credential))));
        if (worldRead) {
            acl.add(new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        }
        return acl;
    }

    /** {@code user:base64(sha1(user:password))}, the id ZooKeeper's digest provider matches. */
    static String digestId(String credential) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-1").digest(credential.getBytes(StandardCharsets.UTF_8));
            return credential.substring(0, credential.indexOf(':')) + ":" + Base64.getEncoder().encodeToString(hash);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-1", e);
        }
    }
}
