package io.schedulerpy.storm;

import io.schedulerpy.storm.thrift.BrainError;
import io.schedulerpy.storm.thrift.ClusterSnapshot;
import io.schedulerpy.storm.thrift.ScheduleReply;
import io.schedulerpy.storm.thrift.SchedulerBrain;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TProtocolException;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.apache.thrift.transport.layered.TFramedTransport;

/**
 * Calls the scheduler-py brain: one fresh TCP connection per call, Thrift framed transport and binary
 * protocol (what the Python side serves with thriftpy2). {@code scheduler.brain.timeout.ms} bounds the
 * whole call — connect, send and reply —, not each read: a peer that answers one byte at a time cannot
 * hold Nimbus's scheduling longer (a watchdog closes the connection at the deadline). Each snapshot is
 * sealed with the shim key ({@link SnapshotSigner}) when {@code scheduler.brain.key.file} is set, and
 * then only the brain's reply sealed for that round is accepted.
 */
public class BrainClient {
    /** Shown to operators whenever the brain cannot be reached. */
    public static final String START_HINT = "start it with `scheduler-py serve` (or set "
        + BrainConfig.ENABLED + ": false to use Storm's DefaultScheduler only)";

    /** Closes calls that reach their deadline; one daemon thread for every client. */
    private static final ScheduledExecutorService WATCHDOG = watchdog();

    private final BrainConfig config;
    private final SnapshotSigner signer;

    public BrainClient(BrainConfig config) {
        this.config = config;
        this.signer = new SnapshotSigner(config.getKeyFile());
    }

    private static ScheduledExecutorService watchdog() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "scheduler-py-brain-call-deadline");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    public BrainConfig getConfig() {
        return config;
    }

    /**
     * One scheduling round.
     *
     * @param snapshot the cluster as Nimbus sees it
     * @return the brain's reply
     * @throws BrainCallException when the brain is unreachable, too slow, failed, or replied garbage
     */
    public ScheduleReply schedule(ClusterSnapshot snapshot) throws BrainCallException {
        SnapshotSigner.Sealed sealed = signer.seal(snapshot);
        if (sealed == null) {
            return call(client -> client.schedule(snapshot, null, null));
        }
        // only the brain's sealed answer to this round is applied (SnapshotSigner.open)
        return signer.open(sealed, call(client -> client.schedule(null, sealed.snapshot(), sealed.mac())));
    }

    /**
     * Liveness probe.
     *
     * @return the brain's version
     * @throws BrainCallException when the brain cannot be asked
     */
    public String ping() throws BrainCallException {
        return call(SchedulerBrain.Client::ping);
    }

    @FunctionalInterface
    private interface Call<T> {
        T apply(SchedulerBrain.Client client) throws TException;
    }

    private <T> T call(Call<T> call) throws BrainCallException {
        String address = config.address();
        int timeout = config.getTimeoutMs();
        TTransport transport;
        TSocket socket;
        try {
            socket = new TSocket(new TConfiguration(), config.getHost(), config.getPort(), timeout, timeout);
            transport = new TFramedTransport(socket);
        } catch (TTransportException e) {
            throw connectFailure(address, timeout, e);
        }
        AtomicBoolean expired = new AtomicBoolean(false);
        ScheduledFuture<?> deadline = WATCHDOG.schedule(() -> {
            expired.set(true);
            socket.close();
        }, timeout, TimeUnit.MILLISECONDS);
        try {
            transport.open();
        } catch (TTransportException e) {
            deadline.cancel(false);
            throw connectFailure(address, timeout, e);
        }
        try {
            SchedulerBrain.Client client = new SchedulerBrain.Client(new TBinaryProtocol(transport));
            T result = call.apply(client);
            if (result == null) {
                throw new BrainCallException("brain at " + address + " returned no reply", "see the brain's log", null);
            }
            return result;
        } catch (BrainError e) {
            throw new BrainCallException("brain at " + address + " could not schedule this round: " + e.getMessage(),
                "see the brain's log", e);
        } catch (TApplicationException e) {
            throw new BrainCallException("brain at " + address + " failed while scheduling (" + e.getMessage() + ")",
                "see the brain's log", e);
        } catch (TProtocolException e) {
            throw new BrainCallException("brain at " + address + " sent a reply the shim cannot read (" + e.getMessage() + ")",
                "make sure both sides use the same scheduler.thrift, framed transport and binary protocol", e);
        } catch (TException e) {
            if (expired.get() || hasCause(e, SocketTimeoutException.class)) {
                throw new BrainCallException("brain at " + address + " did not reply within " + timeout + " ms",
                    "see the brain's log, or raise " + BrainConfig.TIMEOUT_MS + " if its algorithm needs longer", e);
            }
            if (e instanceof TTransportException && ((TTransportException) e).getType() == TTransportException.END_OF_FILE) {
                throw new BrainCallException("brain at " + address + " closed the connection without replying",
                    "see the brain's log; it must serve framed transport and binary protocol", e);
            }
            throw new BrainCallException("brain call to " + address + " failed (" + describe(e) + ")",
                "see the brain's log", e);
        } catch (RuntimeException e) {
            if (expired.get()) {
                throw new BrainCallException("brain at " + address + " did not reply within " + timeout + " ms",
                    "see the brain's log, or raise " + BrainConfig.TIMEOUT_MS + " if its algorithm needs longer", e);
            }
            throw new BrainCallException("brain call to " + address + " failed (" + describe(e) + ")",
                "see the brain's log", e);
        } finally {
            deadline.cancel(false);
            transport.close();
        }
    }

    private static BrainCallException connectFailure(String address, int timeout, TTransportException e) {
        String detail;
        if (hasCause(e, SocketTimeoutException.class)) {
            detail = "no connection within " + timeout + " ms";
        } else if (hasCause(e, UnknownHostException.class)) {
            detail = "unknown host " + rootCause(e).getMessage();
        } else if (hasCause(e, ConnectException.class) || hasCause(e, NoRouteToHostException.class)) {
            detail = rootCause(e).getMessage();
        } else {
            detail = describe(e);
        }
        return new BrainCallException("brain at " + address + " unreachable (" + detail + ")", START_HINT, e);
    }

    private static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    private static Throwable rootCause(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    private static String describe(Throwable e) {
        Throwable root = rootCause(e);
        String message = root.getMessage();
        return message == null || message.isEmpty() ? root.getClass().getSimpleName() : message;
    }
}
