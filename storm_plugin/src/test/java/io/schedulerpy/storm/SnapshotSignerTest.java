package io.schedulerpy.storm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.schedulerpy.storm.thrift.ClusterSnapshot;
import io.schedulerpy.storm.thrift.Decision;
import io.schedulerpy.storm.thrift.ScheduleReply;
import io.schedulerpy.storm.thrift.TopologyPlan;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import org.apache.thrift.TBaseHelper;
import org.apache.thrift.TDeserializer;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotSignerTest {
    /** The vector tests/test_service_shim_auth.py checks on the brain's side. */
    private static final String VECTOR_MAC = "cdca80f9545e656593eae24794d05d107c8e84a4912e9253a4f71e8391e8efd1";
    /** The reply vector tests/test_service_reply_seal.py checks on the brain's side. */
    private static final String VECTOR_REPLY_MAC = "92e9aeeb772b62dbb4bb7940dc1d30da2ab273bf0b22f5de1ffbac9705c41085";

    @TempDir
    Path dir;

    private static ClusterSnapshot snapshot() {
        return new ClusterSnapshot(7L, 1_700_000_000_000L, new ArrayList<>(), new ArrayList<>());
    }

    private Path keyFile(String text, String mode) throws Exception {
        Path file = dir.resolve("scheduler-brain.key");
        Files.write(file, (text + "\n").getBytes(StandardCharsets.UTF_8));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    @Test
    void macIsHmacSha256OverTheContextAndTheBytesAsTheBrainComputesIt() {
        byte[] bytes = new byte[16];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) i;
        }
        byte[] mac = SnapshotSigner.mac("scheduler-py test key".getBytes(StandardCharsets.UTF_8), bytes);
        assertEquals(VECTOR_MAC, HexFormat.of().formatHex(mac));
    }

    @Test
    void sealCarriesTheSnapshotsBinaryBytesAndTheirMacUnderTheTrimmedKey() throws Exception {
        Path file = keyFile("  the-shim-key  ", "rw-------");
        SnapshotSigner.Sealed sealed = new SnapshotSigner(file.toString()).seal(snapshot());
        byte[] bytes = TBaseHelper.byteBufferToByteArray(sealed.snapshot());
        ClusterSnapshot decoded = new ClusterSnapshot();
        new TDeserializer(new TBinaryProtocol.Factory()).deserialize(decoded, bytes);
        assertEquals(snapshot(), decoded);
        assertArrayEquals(SnapshotSigner.mac("the-shim-key".getBytes(StandardCharsets.UTF_8), bytes),
            TBaseHelper.byteBufferToByteArray(sealed.mac()));
    }

    @Test
    void noKeyFileConfiguredMeansUnsealed() throws Exception {
        assertNull(new SnapshotSigner(null).seal(snapshot()));
    }

    @Test
    void aKeyFileOthersCanReadOrAMissingOneFailsTheCallWithTheReason() throws Exception {
        Path open = keyFile("k", "rw-r--r--");
        BrainCallException refused = assertThrows(BrainCallException.class, () -> new SnapshotSigner(open.toString()).seal(snapshot()));
        assertTrue(refused.getReason().contains("open to other users"), refused.getReason());
        String missing = dir.resolve("absent.key").toString();
        refused = assertThrows(BrainCallException.class, () -> new SnapshotSigner(missing).seal(snapshot()));
        assertTrue(refused.getReason().contains("does not exist"), refused.getReason());
    }

    @Test
    void aChangedKeyFileIsReadAgain() throws Exception {
        Path file = keyFile("first", "rw-------");
        SnapshotSigner signer = new SnapshotSigner(file.toString());
        byte[] first = TBaseHelper.byteBufferToByteArray(signer.seal(snapshot()).mac());
        Files.write(file, "second\n".getBytes(StandardCharsets.UTF_8));
        Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
        byte[] second = TBaseHelper.byteBufferToByteArray(signer.seal(snapshot()).mac());
        assertTrue(!java.util.Arrays.equals(first, second), "the new key was not used");
    }

    /** A peer that announces a frame and then sends one byte every 100 ms, for 20 s. */
    @Test
    void theTimeoutBoundsTheWholeCallNotEachRead() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread dripper = new Thread(() -> {
                try (Socket peer = server.accept()) {
                    InputStream in = peer.getInputStream();
                    OutputStream out = peer.getOutputStream();
                    in.read(new byte[4096]);
                    out.write(new byte[] {0, 0, 16, 0}); // a 4 KB frame follows ...
                    out.flush();
                    for (int i = 0; i < 200; i++) { // ... one byte at a time
                        Thread.sleep(100);
                        out.write(0);
                        out.flush();
                    }
                } catch (Exception e) {
                    // the client hung up: what the test expects
                }
            }, "dripping-peer");
            dripper.setDaemon(true);
            dripper.start();
            Map<String, Object> conf = new HashMap<>();
            conf.put(BrainConfig.PORT, server.getLocalPort());
            conf.put(BrainConfig.TIMEOUT_MS, 1000);
            BrainClient client = new BrainClient(BrainConfig.fromConf(conf));
            long started = System.nanoTime();
            BrainCallException failed = assertThrows(BrainCallException.class, () -> client.schedule(snapshot()));
            long tookMs = (System.nanoTime() - started) / 1_000_000;
            assertTrue(failed.getReason().contains("did not reply within 1000 ms"), failed.getReason());
            assertTrue(tookMs < 5000, "the call took " + tookMs + " ms with a 1000 ms timeout");
        }
    }

    @Test
    void replyMacIsHmacSha256OverTheContextTheRoundMacAndTheBytesAsTheBrainComputesIt() {
        byte[] roundMac = new byte[32];
        for (int i = 0; i < roundMac.length; i++) {
            roundMac[i] = (byte) i;
        }
        byte[] bytes = java.util.Arrays.copyOf(roundMac, 16);
        byte[] mac = SnapshotSigner.replyMac("scheduler-py test key".getBytes(StandardCharsets.UTF_8), roundMac, bytes);
        assertEquals(VECTOR_REPLY_MAC, HexFormat.of().formatHex(mac));
    }

    private static ScheduleReply plans() {
        TopologyPlan plan = new TopologyPlan("wc-1", Decision.LEAVE_TO_STORM, new ArrayList<>(), "r", "even");
        ScheduleReply reply = new ScheduleReply(new ArrayList<>(), "test");
        reply.addToPlans(plan);
        return reply;
    }

    private static ScheduleReply sealedFor(SnapshotSigner.Sealed round, byte[] key, ScheduleReply inner) throws Exception {
        byte[] bytes = new TSerializer(new TBinaryProtocol.Factory()).serialize(inner);
        byte[] mac = SnapshotSigner.replyMac(key, TBaseHelper.byteBufferToByteArray(round.mac()), bytes);
        return new ScheduleReply(new ArrayList<>(), "test").setSealed_reply(bytes).setReply_mac(mac);
    }

    @Test
    void onlyTheBrainsReplySealedForThisRoundOpens() throws Exception {
        Path file = keyFile("the-shim-key", "rw-------");
        byte[] key = "the-shim-key".getBytes(StandardCharsets.UTF_8);
        SnapshotSigner signer = new SnapshotSigner(file.toString());
        SnapshotSigner.Sealed round = signer.seal(snapshot());
        assertEquals(plans(), signer.open(round, sealedFor(round, key, plans())));

        BrainCallException refused = assertThrows(BrainCallException.class, () -> signer.open(round, plans()));
        assertTrue(refused.getReason().contains("is not sealed"), refused.getReason());
        ScheduleReply forged = sealedFor(round, "an impostor's key".getBytes(StandardCharsets.UTF_8), plans());
        refused = assertThrows(BrainCallException.class, () -> signer.open(round, forged));
        assertTrue(refused.getReason().contains("does not match"), refused.getReason());
        ScheduleReply tampered = sealedFor(round, key, plans());
        byte[] bytes = tampered.getSealed_reply(); // a copy (the generated getter copies)
        bytes[bytes.length - 2] ^= 1;
        tampered.setSealed_reply(bytes);
        refused = assertThrows(BrainCallException.class, () -> signer.open(round, tampered));
        assertTrue(refused.getReason().contains("does not match"), refused.getReason());
        SnapshotSigner.Sealed another = signer.seal(new ClusterSnapshot(8L, 1_700_000_005_000L, new ArrayList<>(),
            new ArrayList<>()));
        refused = assertThrows(BrainCallException.class, () -> signer.open(another, sealedFor(round, key, plans())));
        assertTrue(refused.getReason().contains("another round"), refused.getReason());
    }

    @Test
    void theClientAppliesOnlyASealedReplyAndAnImpostorsPlansAreRefused() throws Exception {
        Path file = keyFile("the-shim-key", "rw-------");
        try (TestBrainServer brain = new TestBrainServer(snapshot -> plans())) {
            Map<String, Object> conf = new HashMap<>();
            conf.put(BrainConfig.PORT, brain.port());
            conf.put(BrainConfig.TIMEOUT_MS, 5000);
            conf.put(BrainConfig.KEY_FILE, file.toString());
            BrainClient client = new BrainClient(BrainConfig.fromConf(conf));
            BrainCallException refused = assertThrows(BrainCallException.class, () -> client.schedule(snapshot()));
            assertTrue(refused.getReason().contains("is not sealed"), refused.getReason());
            brain.sealRepliesWith("the-shim-key".getBytes(StandardCharsets.UTF_8));
            assertEquals(plans(), client.schedule(snapshot()));
            brain.sealRepliesWith("an impostor's key".getBytes(StandardCharsets.UTF_8));
            refused = assertThrows(BrainCallException.class, () -> client.schedule(snapshot()));
            assertTrue(refused.getReason().contains("does not match"), refused.getReason());
        }
    }
}
