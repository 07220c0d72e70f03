package io.schedulerpy.storm.monitor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** A fake {@code /proc/self} tree: {@code task/<tid>/comm} and {@code task/<tid>/io} as Linux writes them. */
class NettyWritesTest {
    @TempDir
    Path self;

    private final OnceLog problems = new OnceLog(LoggerFactory.getLogger(getClass()));

    private void thread(long tid, String comm, long wchar) throws IOException {
        Path dir = Files.createDirectories(self.resolve("task").resolve(Long.toString(tid)));
        Files.writeString(dir.resolve("comm"), comm + "\n");
        io(tid, wchar);
    }

    private void io(long tid, long wchar) throws IOException {
        Files.writeString(self.resolve("task").resolve(Long.toString(tid)).resolve("io"),
            "rchar: 12345\nwchar: " + wchar + "\nsyscr: 10\nsyscw: 20\nread_bytes: 0\nwrite_bytes: 0\n"
                + "cancelled_write_bytes: 0\n");
    }

    private void exit(long tid) throws IOException {
        Path dir = self.resolve("task").resolve(Long.toString(tid));
        Files.delete(dir.resolve("comm"));
        Files.delete(dir.resolve("io"));
        Files.delete(dir);
    }

    @Test
    void theFirstWindowIsTheBaselineThenClientThreadsIncreasesAreSummed() throws IOException {
        thread(100, "java", 5_000_000);
        thread(101, "client-worker-1", 1_000);
        thread(102, "client-worker-2", 2_000);
        thread(103, "client-schedule", 9_000);           // Storm's client-schedule-service timer, truncated
        thread(104, "Netty-server-lo", 7_000);           // the server side
        NettyWrites w = new NettyWrites(self, problems);
        assertEquals(-1, w.window(), "first window: baseline only, field left out");

        io(100, 9_000_000);
        io(101, 1_500);
        io(102, 2_250);
        io(103, 19_000);
        io(104, 17_000);
        assertEquals(500 + 250, w.window(), "only client-worker threads, their increases");
        assertEquals(0, w.window(), "nothing written");
    }

    @Test
    void aNewThreadCountsWholeAnExitedOneNothing() throws IOException {
        thread(101, "client-worker-1", 1_000);
        thread(102, "client-worker-2", 2_000);
        NettyWrites w = new NettyWrites(self, problems);
        w.window();
        thread(105, "client-worker-3", 300);             // created in this window
        io(101, 1_100);
        exit(102);                                       // exited: what it wrote since the last window is lost
        assertEquals(300 + 100, w.window());
        io(105, 350);
        assertEquals(50, w.window());
    }

    @Test
    void threadsThatExistedAtTheBaselineReportNothingOfTheirPast() throws IOException {
        thread(101, "client-worker-1", 123_456);
        NettyWrites w = new NettyWrites(self, problems);
        assertEquals(-1, w.window());
        assertEquals(0, w.window());
    }

    @Test
    void noClientThreadIsZero() throws IOException {
        thread(100, "main", 10);
        NettyWrites w = new NettyWrites(self, problems);
        w.window();
        io(100, 20);
        assertEquals(0, w.window(), "readable, nothing written by Netty clients (e.g. a one-worker topology)");
    }

    @Test
    void commIsReadOncePerTid() throws IOException {
        thread(100, "main", 10);
        thread(101, "client-worker-1", 10);
        NettyWrites w = new NettyWrites(self, problems);
        w.window();
        Files.writeString(self.resolve("task/100/comm"), "client-worker-9\n");
        Files.delete(self.resolve("task/101/comm"));     // a cached tid: comm not read again
        io(100, 1_000);
        io(101, 40);
        assertEquals(30, w.window());
    }

    @Test
    void aReusedTidIsANewThread() throws IOException {
        thread(101, "client-worker-1", 5_000);
        thread(102, "client-worker-2", 5_000);
        NettyWrites w = new NettyWrites(self, problems);
        w.window();
        io(101, 70);                                     // wchar went down: another thread under tid 101
        Files.writeString(self.resolve("task/102/comm"), "pool-3-thread-1\n");
        io(102, 80);                                     // and a reused tid that is no client thread
        assertEquals(70, w.window());
    }

    @Test
    void unreadableProcIsUnknownThenANewBaseline() throws IOException {
        NettyWrites w = new NettyWrites(self, problems);  // no task directory: not Linux
        assertEquals(-1, w.window());
        assertEquals(-1, w.window());
        assertTrue(problems.hasSeen(NettyWrites.PROBLEM), "logged (once)");
        thread(101, "client-worker-1", 1_000);
        assertEquals(-1, w.window(), "readable again: a baseline");
        io(101, 1_200);
        assertEquals(200, w.window());
        assertFalse(problems.hasSeen(NettyWrites.PROBLEM), "cleared once readable");
    }

    @Test
    void aClientThreadWithoutIoAccountingIsUnknown() throws IOException {
        thread(101, "client-worker-1", 1_000);
        NettyWrites w = new NettyWrites(self, problems);
        w.window();
        Files.delete(self.resolve("task/101/io"));       // a kernel without per-task I/O accounting
        assertEquals(-1, w.window());
        assertTrue(problems.hasSeen(NettyWrites.PROBLEM));
        io(101, 1_500);
        assertEquals(-1, w.window(), "then a new baseline");
        io(101, 1_600);
        assertEquals(100, w.window());
    }

    @Test
    void malformedIoIsUnknown() throws IOException {
        thread(101, "client-worker-1", 1_000);
        NettyWrites w = new NettyWrites(self, problems);
        w.window();
        Files.writeString(self.resolve("task/101/io"), "rchar: 1\n");
        assertEquals(-1, w.window());
        Files.writeString(self.resolve("task/101/io"), "wchar: x\n");
        assertEquals(-1, w.window());
    }

    @Test
    void entriesThatAreNoThreadsAreSkipped() throws IOException {
        thread(101, "client-worker-1", 1_000);
        Files.createDirectories(self.resolve("task/not-a-tid"));
        NettyWrites w = new NettyWrites(self, problems);
        w.window();
        io(101, 1_001);
        assertEquals(1, w.window());
    }

    /** On Linux: a thread named as Storm names its Netty client threads, writing through NIO. */
    @Test
    void realProcCountsTheBytesAClientThreadWrites(@TempDir Path out) throws Exception {
        assumeTrue(Files.isReadable(Paths.get("/proc/self/task")) && ProcStat.available(), "needs Linux /proc");
        NettyWrites w = new NettyWrites(problems);
        assertEquals(-1, w.window());
        int size = 300_000;
        CountDownLatch written = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread client = new Thread(() -> {
            try (FileChannel ch = FileChannel.open(out.resolve("sent"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.wrap(new byte[size]);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            } catch (Throwable t) {
                failed.set(t);
            }
            written.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                // done
            }
        }, "client-worker-7");
        client.setDaemon(true);
        client.start();
        try {
            assertTrue(written.await(10, TimeUnit.SECONDS));
            assertEquals(null, failed.get());
            long bytes = w.window();
            assertTrue(bytes >= size && bytes < size + 64 * 1024, "counted " + bytes + " for " + size + " written");
            assertEquals(0, w.window());
            assertFalse(problems.hasSeen(NettyWrites.PROBLEM));
        } finally {
            release.countDown();
            client.join(10_000);
        }
        assertEquals(size, Files.size(out.resolve("sent")));
    }
}
