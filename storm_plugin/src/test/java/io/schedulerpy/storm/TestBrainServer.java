package io.schedulerpy.storm;

import io.schedulerpy.storm.thrift.BrainError;
import io.schedulerpy.storm.thrift.ClusterSnapshot;
import io.schedulerpy.storm.thrift.ScheduleReply;
import io.schedulerpy.storm.thrift.SchedulerBrain;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import org.apache.thrift.TBaseHelper;
import org.apache.thrift.TDeserializer;
import org.apache.thrift.TException;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TSimpleServer;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.layered.TFramedTransport;

/**
 * A real Thrift SchedulerBrain server on an ephemeral loopback port (framed transport, binary
 * protocol, like the Python brain), answering with a test function (a null answer raises BrainError).
 */
final class TestBrainServer implements AutoCloseable {
    private static final long CLOSE_TIMEOUT_MS = 5_000;
    private final TServerSocket socket;
    private final TServer server;
    private final Thread thread;
    private final List<ClusterSnapshot> snapshots = Collections.synchronizedList(new ArrayList<>());
    private volatile Function<ClusterSnapshot, ScheduleReply> answer;
    private volatile long delayMs;
    private volatile byte[] replyKey;

    TestBrainServer(Function<ClusterSnapshot, ScheduleReply> answer) throws Exception {
        this.answer = answer;
        SchedulerBrain.Iface handler = new SchedulerBrain.Iface() {
            @Override
            public ScheduleReply schedule(ClusterSnapshot unsealed, ByteBuffer sealed, ByteBuffer mac) throws BrainError {
                ClusterSnapshot snapshot = unsealed;
                if (snapshot == null && sealed != null) { // the test brain reads a sealed round without checking it
                    snapshot = new ClusterSnapshot();
                    try {
                        new TDeserializer(new TBinaryProtocol.Factory()).deserialize(snapshot, TBaseHelper.byteBufferToByteArray(sealed));
                    } catch (TException e) {
                        throw new BrainError("test brain cannot read the sealed snapshot: " + e);
                    }
                }
                snapshots.add(snapshot);
                if (delayMs > 0) {
                    try {
                        Thread.sleep(delayMs);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                ScheduleReply reply = TestBrainServer.this.answer.apply(snapshot);
                if (reply == null) {
                    throw new BrainError("test brain refuses");
                }
                byte[] key = replyKey;
                if (key == null || sealed == null || mac == null) {
                    return reply;
                }
                try { // as the brain seals its answer to a sealed round (scheduler_py/service/shim_auth.py)
                    byte[] bytes = new TSerializer(new TBinaryProtocol.Factory()).serialize(reply);
                    byte[] replyMac = SnapshotSigner.replyMac(key, TBaseHelper.byteBufferToByteArray(mac), bytes);
                    return new ScheduleReply(new ArrayList<>(), reply.getBrain_version())
                        .setSealed_reply(bytes).setReply_mac(replyMac);
                } catch (TException e) {
                    throw new BrainError("test brain cannot serialize its reply: " + e);
                }
            }

            @Override
            public String ping() {
                return "test-brain";
            }

            @Override
            public String replan(String topology, String algorithm, boolean dryRun, String secret,
                                 String params) throws BrainError {
                throw new BrainError("the test brain has no reconfiguration controller");
            }

            @Override
            public String status(String secret) {
                return "{}";
            }

            @Override
            public String history(String topology, String secret) throws BrainError {
                throw new BrainError("the test brain has no reconfiguration controller");
            }

            @Override
            public String set_trigger_paused(boolean paused, String topology, String secret)
                    throws BrainError {
                throw new BrainError("the test brain has no reconfiguration controller");
            }

            @Override
            public String prove_operator_secret(ByteBuffer challenge) throws BrainError {
                throw new BrainError("the test brain has no operator secret");
            }
        };
        socket = new TServerSocket(new InetSocketAddress("127.0.0.1", 0));
        server = new TSimpleServer(new TServer.Args(socket)
            .processor(new SchedulerBrain.Processor<>(handler))
            .transportFactory(new TFramedTransport.Factory())
            .protocolFactory(new TBinaryProtocol.Factory()));
        thread = new Thread(server::serve, "test-brain");
        thread.setDaemon(true);
        thread.start();
    }

    int port() {
        return socket.getServerSocket().getLocalPort();
    }

    void answer(Function<ClusterSnapshot, ScheduleReply> answer) {
        this.answer = answer;
    }

    void delay(long millis) {
        this.delayMs = millis;
    }

    /** Seal the answers to sealed rounds with {@code key}, as the brain does; null: answer unsealed. */
    void sealRepliesWith(byte[] key) {
        this.replyKey = key;
    }

    List<ClusterSnapshot> snapshots() {
        return snapshots;
    }

    ClusterSnapshot lastSnapshot() {
        return snapshots.get(snapshots.size() - 1);
    }

    /**
     * Stops serving and returns once the port refuses connections, so a test that closes the
     * brain and then schedules sees it down (a call the server is still answering, e.g. a slow
     * one, may finish on its own).
     */
    @Override
    public void close() {
        int port = port();
        server.stop();
        socket.close();
        long deadline = System.currentTimeMillis() + CLOSE_TIMEOUT_MS;
        while (accepts(port)) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("test brain on port " + port + " still accepts connections "
                    + CLOSE_TIMEOUT_MS + " ms after close");
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean accepts(int port) {
        try (Socket probe = new Socket()) {
            probe.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
