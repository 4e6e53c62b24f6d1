// Hog.java - a JVM host for tests/e2e/host_java.sh: native memory through direct byte buffers
// (Unsafe_AllocateMemory0 -> os::malloc in libjvm, the Spark/Gluten executor case), many threads,
// and a GC. Prints only deterministic lines.
import java.nio.ByteBuffer;
import java.util.ArrayList;

public class Hog {
    static final ArrayList<ByteBuffer> keep = new ArrayList<>();

    static void hog(int n) {
        for (int i = 0; i < n; i++)
            keep.add(ByteBuffer.allocateDirect(1 << 20));
    }

    public static void main(String[] args) throws Exception {
        hog(64);
        Thread[] ts = new Thread[16];
        long[] lens = new long[ts.length];
        for (int i = 0; i < ts.length; i++) {
            final int k = i;
            ts[i] = new Thread(() -> {
                StringBuilder sb = new StringBuilder();
                for (int j = 0; j < 50000; j++) sb.append(j % 10);
                ByteBuffer b = ByteBuffer.allocateDirect(4096 * (k + 1));
                lens[k] = sb.length() + b.capacity();
            });
            ts[i].start();
        }
        long sum = 0;
        for (int i = 0; i < ts.length; i++) { ts[i].join(); sum += lens[i]; }
        System.gc();
        long direct = 0;
        for (ByteBuffer b : keep) direct += b.capacity();
        System.out.println("direct bytes " + direct);
        System.out.println("thread work " + sum);
        System.exit(3);
    }
}
