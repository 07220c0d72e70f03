package io.schedulerpy.storm;

import io.schedulerpy.storm.thrift.ClusterSnapshot;
import io.schedulerpy.storm.thrift.ScheduleReply;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.EnumSet;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.thrift.TBaseHelper;
import org.apache.thrift.TDeserializer;
import org.apache.thrift.TException;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TBinaryProtocol;

/**
 * Seals a snapshot for the brain: its binary-protocol bytes and an HMAC-SHA256 of
 * {@link #CONTEXT} followed by those bytes, under the key in {@code scheduler.brain.key.file}
 * (scheduler_py/service/shim_auth.py checks it, plus the snapshot's timestamp and that the seal was
 * not seen before). The key is the file's one line of text, trimmed, as UTF-8; the file is read
 * again when it changes, and refused when other users may read it.
 *
 * <p>The brain seals its answer to a sealed round with the same key ({@link #open}): the reply's
 * binary-protocol bytes and an HMAC-SHA256 of {@link #REPLY_CONTEXT}, the round's MAC and those bytes
 * (scheduler_py/service/shim_auth.py, {@code seal_reply}). Only a reply that opens is applied, so a
 * process on the brain's port without the key cannot feed Nimbus a plan, and no reply fits another
 * round.
 */
public final class SnapshotSigner {
    /** What the MAC covers before the snapshot's bytes; the brain uses the same bytes. */
    static final byte[] CONTEXT = "scheduler-py snapshot v1\n".getBytes(StandardCharsets.UTF_8);
    /** What a reply's MAC covers before the round's MAC and the reply's bytes; the brain uses the same. */
    static final byte[] REPLY_CONTEXT = "scheduler-py reply v1\n".getBytes(StandardCharsets.UTF_8);
    private static final String ALGORITHM = "HmacSHA256";
    private static final Set<PosixFilePermission> OPEN = EnumSet.of(
        PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
        PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    /** A sealed snapshot: what {@code schedule}'s {@code sealed_snapshot} and {@code mac} carry. */
    public record Sealed(ByteBuffer snapshot, ByteBuffer mac) {
    }

    private final Path keyFile;
    private byte[] key;
    private FileTime keyModified;

    /**
     * A signer for the key in {@code keyFile}.
     *
     * @param keyFile the key file, or null: {@link #seal} then returns null (rounds go unsealed)
     */
    public SnapshotSigner(String keyFile) {
        this.keyFile = keyFile == null ? null : Paths.get(keyFile);
    }

    /** Whether a key file is configured. */
    public boolean isConfigured() {
        return keyFile != null;
    }

    /**
     * Seal one snapshot.
     *
     * @param snapshot the round's snapshot
     * @return the sealed snapshot, or null when no key file is configured
     * @throws BrainCallException when the key file is configured but cannot be used (the reason says why)
     */
    public Sealed seal(ClusterSnapshot snapshot) throws BrainCallException {
        if (keyFile == null) {
            return null;
        }
        byte[] current = currentKey();
        byte[] bytes;
        try {
            bytes = new TSerializer(new TBinaryProtocol.Factory()).serialize(snapshot);
        } catch (TException e) {
            throw new BrainCallException("the shim could not serialize this round's snapshot (" + e.getMessage() + ")",
                "please report this scheduler-py shim bug", e);
        }
        return new Sealed(ByteBuffer.wrap(bytes), ByteBuffer.wrap(mac(current, bytes)));
    }

    /**
     * The plans of the brain's answer to the sealed round {@code sealed}: the reply's
     * {@code sealed_reply}, once its {@code reply_mac} is right under the shim key for this round.
     *
     * @param sealed the round as it was sent
     * @param reply what came back
     * @return the sealed reply, opened
     * @throws BrainCallException when the reply is not sealed, its MAC is wrong (a peer without the key,
     *     or the answer to another round) or its bytes are not a reply
     */
    public ScheduleReply open(Sealed sealed, ScheduleReply reply) throws BrainCallException {
        String hint = "run `scheduler-py serve` of this version with the shim key in " + keyFile
            + " (--shim-key-file); if it does, another process answers on the brain's port";
        if (!reply.isSetSealed_reply() || !reply.isSetReply_mac()) {
            throw new BrainCallException("the reply to this sealed round is not sealed with the shim key (an older "
                + "brain, or a peer without the key on the brain's port); its plans are not applied", hint, null);
        }
        byte[] bytes = reply.getSealed_reply();
        byte[] roundMac = TBaseHelper.byteBufferToByteArray(sealed.mac());
        if (!MessageDigest.isEqual(replyMac(currentKey(), roundMac, bytes), reply.getReply_mac())) {
            throw new BrainCallException("the reply's MAC does not match the shim key in " + keyFile
                + " for this round (a peer without the key, or the answer to another round); its plans are not "
                + "applied", hint, null);
        }
        ScheduleReply opened = new ScheduleReply();
        try {
            new TDeserializer(new TBinaryProtocol.Factory()).deserialize(opened, bytes);
        } catch (TException e) {
            throw new BrainCallException("the brain's sealed reply is not a binary-protocol ScheduleReply ("
                + e.getMessage() + ")", "make sure both sides use the same scheduler.thrift", e);
        }
        return opened;
    }

    /**
     * HMAC-SHA256 of {@link #REPLY_CONTEXT}, {@code roundMac} and {@code bytes} under {@code key}.
     *
     * @param key the shim key
     * @param roundMac the MAC of the round the reply answers
     * @param bytes the serialized reply
     * @return the 32-byte MAC
     */
    static byte[] replyMac(byte[] key, byte[] roundMac, byte[] bytes) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(key, ALGORITHM));
            mac.update(REPLY_CONTEXT);
            mac.update(roundMac);
            return mac.doFinal(bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM has no " + ALGORITHM, e);
        }
    }

    /**
     * HMAC-SHA256 of {@link #CONTEXT} followed by {@code bytes} under {@code key}.
     *
     * @param key the shim key
     * @param bytes the serialized snapshot
     * @return the 32-byte MAC
     */
    static byte[] mac(byte[] key, byte[] bytes) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(key, ALGORITHM));
            mac.update(CONTEXT);
            return mac.doFinal(bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM has no " + ALGORITHM, e);
        }
    }

    private synchronized byte[] currentKey() throws BrainCallException {
        String hint = "install the brain's shim key file (scheduler-py serve --shim-key-file) at " + keyFile
            + ", readable only by the user Nimbus runs as (chmod 600), or unset " + BrainConfig.KEY_FILE;
        try {
            FileTime modified = Files.getLastModifiedTime(keyFile);
            if (key != null && modified.equals(keyModified)) {
                return key;
            }
            checkPrivate();
            String text = new String(Files.readAllBytes(keyFile), StandardCharsets.UTF_8).trim();
            if (text.isEmpty()) {
                throw new BrainCallException("the shim key file " + keyFile + " is empty", hint, null);
            }
            key = text.getBytes(StandardCharsets.UTF_8);
            keyModified = modified;
            return key;
        } catch (NoSuchFileException e) {
            throw new BrainCallException("the shim key file " + keyFile + " (" + BrainConfig.KEY_FILE + ") does not exist",
                hint, e);
        } catch (IOException e) {
            throw new BrainCallException("cannot read the shim key file " + keyFile + " (" + e + ")", hint, e);
        }
    }

    private void checkPrivate() throws IOException, BrainCallException {
        Set<PosixFilePermission> permissions;
        try {
            permissions = Files.getPosixFilePermissions(keyFile);
        } catch (UnsupportedOperationException e) {
            return; // not a POSIX file system: the operator's access control applies
        }
        Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
        open.addAll(permissions);
        open.retainAll(OPEN);
        if (!open.isEmpty()) {
            throw new BrainCallException("the shim key file " + keyFile + " is open to other users " + open
                + "; expected mode 0600", "run `chmod 600 " + keyFile + "`", null);
        }
    }
}
