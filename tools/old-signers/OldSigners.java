// Signers of the v1-only and early-v2 era of the Android Gradle Plugin, run from their real artifacts on Maven
// Central (tools/old-signers/build.sh downloads them): the other-signers corpus (test/fixtures/other-signers-corpus.ts)
// signs with them so that the verifier is compared with apksig on what old builds actually wrote. Two commands:
//
//   signed-jar-builder --in UNSIGNED --out SIGNED --key KS.p12
//     The Android Gradle Plugin 1.5's own JAR signer, com.android.builder.signing.SignedJarBuilder of
//     com.android.tools.build:builder:1.5.0 (PKCS#7 by Bouncy Castle 1.48, as that builder's pom pins): SHA-1 entry
//     digests, SHA1with<key algorithm> signatures, META-INF/CERT.SF and META-INF/CERT.<RSA|DSA|EC>, the .SF
//     "Created-By: 1.0 (Android)". Entries are copied from UNSIGNED as the plugin's Packager copied aapt's resource
//     package (SignedJarBuilder.writeZip, no filter); Built-By is that builder's Builder-Version (1.5.0), as Packager
//     passes it, and Created-By the plugin's "Android Gradle 1.5.0". v1 only: that plugin knew no other scheme.
//
//   apksig-3.1 --in UNSIGNED --out SIGNED --key KS.p12 [--v2 true|false] [--min-sdk N]
//     com.android.tools.build:apksig:3.1.4 (the apksig the Android Gradle Plugin 3.1.4's builder depends on) through
//     its ApkSigner with its defaults: v1 and, unless --v2 false (as builds with v2SigningEnabled false ran), v2;
//     that apksig has no v3. minSdk is read from the manifest unless --min-sdk is given.
//
// Keystores are PKCS#12 with store and key password "android" and one key entry, as the other corpora make them.
// Each command loads only its own artifact's classes, so one classpath serves both.
import com.android.apksig.ApkSigner;
import com.android.builder.signing.SignedJarBuilder;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Map;

public final class OldSigners {
    private static final char[] PASSWORD = "android".toCharArray();

    public static void main(String[] args) throws Exception {
        if (args.length == 0) usage();
        Map<String, String> o = options(java.util.Arrays.copyOfRange(args, 1, args.length));
        if (!o.containsKey("in") || !o.containsKey("out") || !o.containsKey("key")) usage();
        switch (args[0]) {
            case "signed-jar-builder": Agp15.sign(o); break;
            case "apksig-3.1": Apksig31.sign(o); break;
            default: usage();
        }
    }

    private static void usage() {
        System.err.println("usage: OldSigners signed-jar-builder --in IN --out OUT --key KS.p12\n"
                + "       OldSigners apksig-3.1 --in IN --out OUT --key KS.p12 [--v2 true|false] [--min-sdk N]");
        System.exit(2);
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) usage();
            o.put(args[i].substring(2), args[i + 1]);
        }
        return o;
    }

    private static final class Key {
        final PrivateKey privateKey;
        final X509Certificate cert;
        Key(PrivateKey privateKey, X509Certificate cert) { this.privateKey = privateKey; this.cert = cert; }
    }

    private static Key loadKey(String path) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(path)) {
            ks.load(in, PASSWORD);
        }
        for (Enumeration<String> e = ks.aliases(); e.hasMoreElements(); ) {
            String alias = e.nextElement();
            if (ks.isKeyEntry(alias)) {
                return new Key((PrivateKey) ks.getKey(alias, PASSWORD), (X509Certificate) ks.getCertificate(alias));
            }
        }
        throw new IllegalArgumentException(path + ": no key entry");
    }

    /** builder 1.5.0's SignedJarBuilder, called as its Packager called it. */
    private static final class Agp15 {
        static void sign(Map<String, String> o) throws Exception {
            Key key = loadKey(o.get("key"));
            File out = new File(o.get("out"));
            boolean done = false;
            try (OutputStream os = new FileOutputStream(out); InputStream in = new FileInputStream(o.get("in"))) {
                SignedJarBuilder b = new SignedJarBuilder(os, key.privateKey, key.cert, "1.5.0", "Android Gradle 1.5.0");
                b.writeZip(in, null, null);
                b.close();
                done = true;
            } finally {
                if (!done) out.delete();
            }
        }
    }

    /** apksig 3.1.4's ApkSigner. */
    private static final class Apksig31 {
        static void sign(Map<String, String> o) throws Exception {
            Key key = loadKey(o.get("key"));
            ApkSigner.Builder b = new ApkSigner.Builder(Collections.singletonList(
                    new ApkSigner.SignerConfig.Builder("CERT", key.privateKey, Collections.singletonList(key.cert)).build()))
                    .setInputApk(new File(o.get("in")))
                    .setOutputApk(new File(o.get("out")))
                    .setV1SigningEnabled(true)
                    .setV2SigningEnabled(Boolean.parseBoolean(o.getOrDefault("v2", "true")));
            if (o.containsKey("min-sdk")) b.setMinSdkVersion(Integer.parseInt(o.get("min-sdk")));
            b.build().sign();
        }
    }
}
