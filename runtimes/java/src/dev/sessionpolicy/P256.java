package dev.sessionpolicy;

import java.math.BigInteger;

/**
 * ECDSA P-256 verification in plain arithmetic (affine coordinates, {@link BigInteger}), for the one
 * case the JDK gets wrong: a valid signature whose point {@code u1 G + u2 Q} has an x-coordinate
 * of {@code n} or more, so that {@code r = x - n} (Wycheproof tcId 115 and 257, which the JDK's
 * {@code SHA256withECDSA} refuses: OpenJDK 17.0.15 here). It can only happen when {@code r}
 * is below {@code p - n} (about 2^128), which an honest signature is with probability 2^-128;
 * {@link MachineUpdater} asks this class only then, after the JDK refused. Public data only: no
 * secret goes through it, so it need not run in constant time.
 */
final class P256 {
    static final BigInteger P = new BigInteger("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16);
    static final BigInteger N = new BigInteger("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16);
    private static final BigInteger A = P.subtract(BigInteger.valueOf(3));
    private static final BigInteger B = new BigInteger("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b", 16);
    private static final BigInteger GX = new BigInteger("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296", 16);
    private static final BigInteger GY = new BigInteger("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5", 16);

    private P256() {}

    /** Whether {@code (x, y)} is a point of the curve (not the point at infinity). */
    static boolean isOnCurve(BigInteger x, BigInteger y) {
        if (x.signum() < 0 || y.signum() < 0 || x.compareTo(P) >= 0 || y.compareTo(P) >= 0) return false;
        return y.multiply(y).mod(P).equals(x.pow(3).add(A.multiply(x)).add(B).mod(P));
    }

    /** Whether {@code (r, s)} is a signature of the SHA-256 digest {@code hash} by the key {@code (qx, qy)}. */
    static boolean verify(BigInteger qx, BigInteger qy, byte[] hash, BigInteger r, BigInteger s) {
        if (hash.length != 32 || !isOnCurve(qx, qy)) return false;
        if (r.signum() <= 0 || s.signum() <= 0 || r.compareTo(N) >= 0 || s.compareTo(N) >= 0) return false;
        BigInteger e = new BigInteger(1, hash); // n has 256 bits: the whole digest
        BigInteger w = s.modInverse(N);
        BigInteger[] point = add(multiply(GX, GY, e.multiply(w).mod(N)), multiply(qx, qy, r.multiply(w).mod(N)));
        return point != null && point[0].mod(N).equals(r);
    }

    /** {@code k (x, y)}, or null for the point at infinity. */
    private static BigInteger[] multiply(BigInteger x, BigInteger y, BigInteger k) {
        BigInteger[] result = null;
        BigInteger[] base = {x, y};
        for (int i = k.bitLength() - 1; i >= 0; i--) {
            result = add(result, result);
            if (k.testBit(i)) result = add(result, base);
        }
        return result;
    }

    /** The sum of two points (null: the point at infinity). */
    private static BigInteger[] add(BigInteger[] a, BigInteger[] b) {
        if (a == null) return b;
        if (b == null) return a;
        BigInteger slope;
        if (a[0].equals(b[0])) {
            if (!a[1].equals(b[1]) || a[1].signum() == 0) return null; // a = -b
            BigInteger x2 = a[0].multiply(a[0]);
            slope = x2.multiply(BigInteger.valueOf(3)).add(A).multiply(a[1].shiftLeft(1).modInverse(P)).mod(P);
        } else {
            slope = b[1].subtract(a[1]).multiply(b[0].subtract(a[0]).mod(P).modInverse(P)).mod(P);
        }
        BigInteger x = slope.multiply(slope).subtract(a[0]).subtract(b[0]).mod(P);
        BigInteger y = slope.multiply(a[0].subtract(x)).subtract(a[1]).mod(P);
        return new BigInteger[] {x, y};
    }
}
