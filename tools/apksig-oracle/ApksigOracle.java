// Google's apksig library (the code behind `apksigner`) as a signing and verifying oracle for APK Signature Scheme
// v3.1, which Debian's apksigner predates. Two commands:
//
//   sign --in UNSIGNED --out SIGNED --key KS.p12 [--rotate-to NEW.p12] [--rotation-min-sdk N]
//        [--v1 true|false] [--v2 true|false] [--v3 true|false] [--verity true|false] [--min-sdk N]
//     Signs with apksig's ApkSigner. With --rotate-to, a SigningCertificateLineage KEY -> NEW is built with apksig and
//     both keys are given as signers, as `apksigner sign --ks OLD --next-signer --ks NEW --lineage L` does: v1/v2/v3.0
//     by the old key and, from --rotation-min-sdk (default 33, the platform version of v3.1), v3.1 by the new one.
//     Keystores are PKCS#12 with store and key password "android" and one key entry.
//
//   verify [--min-sdk N] [--max-sdk N] FILE [[--min-sdk N] [--max-sdk N] FILE ...]
//     Verifies each FILE with apksig's ApkVerifier (options apply to the next FILE only) and prints one JSON line per
//     file: verified, each scheme's "verified using" flag, the signer certificates' SHA-256 as `apksigner verify
//     --print-certs` names them (ApkVerifier's getSignerCertificates: the newest v3.1 signer, else the newest v3
//     signer, else every v2 signer, else every v1 signer), the SHA-256 of each certificate of the signing lineage
//     oldest first, errors and warnings; a file apksig cannot read is {"verified":false,"exception":"..."}.
import com.android.apksig.ApkSigner;
import com.android.apksig.ApkVerifier;
import com.android.apksig.SigningCertificateLineage;
import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class ApksigOracle {
    private static final char[] PASSWORD = "android".toCharArray();

    public static void main(String[] args) throws Exception {
        if (args.length == 0) usage();
        String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "sign": sign(rest); break;
            case "verify": verify(rest); break;
            default: usage();
        }
    }

    private static void usage() {
        System.err.println("usage: ApksigOracle sign --in IN --out OUT --key KS.p12 [--rotate-to KS.p12] [--rotation-min-sdk N]"
                + " [--v1|--v2|--v3|--verity true|false] [--min-sdk N]\n       ApksigOracle verify [--min-sdk N] [--max-sdk N] FILE ...");
        System.exit(2);
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

    private static void sign(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) usage();
            o.put(args[i].substring(2), args[i + 1]);
        }
        if (!o.containsKey("in") || !o.containsKey("out") || !o.containsKey("key")) usage();
        Key old = loadKey(o.get("key"));
        ApkSigner.SignerConfig oldConfig =
                new ApkSigner.SignerConfig.Builder("old", old.privateKey, Collections.singletonList(old.cert)).build();
        List<ApkSigner.SignerConfig> signers = new ArrayList<>();
        signers.add(oldConfig);
        SigningCertificateLineage lineage = null;
        if (o.containsKey("rotate-to")) {
            Key next = loadKey(o.get("rotate-to"));
            lineage = new SigningCertificateLineage.Builder(
                    new SigningCertificateLineage.SignerConfig.Builder(old.privateKey, old.cert).build(),
                    new SigningCertificateLineage.SignerConfig.Builder(next.privateKey, next.cert).build()).build();
            signers.add(new ApkSigner.SignerConfig.Builder("new", next.privateKey, Collections.singletonList(next.cert)).build());
        }
        ApkSigner.Builder b = new ApkSigner.Builder(signers)
                .setInputApk(new File(o.get("in")))
                .setOutputApk(new File(o.get("out")))
                .setV1SigningEnabled(Boolean.parseBoolean(o.getOrDefault("v1", "true")))
                .setV2SigningEnabled(Boolean.parseBoolean(o.getOrDefault("v2", "true")))
                .setV3SigningEnabled(Boolean.parseBoolean(o.getOrDefault("v3", "true")))
                .setV4SigningEnabled(false)
                .setVerityEnabled(Boolean.parseBoolean(o.getOrDefault("verity", "false")));
        if (lineage != null) {
            b.setSigningCertificateLineage(lineage);
            b.setMinSdkVersionForRotation(Integer.parseInt(o.getOrDefault("rotation-min-sdk", "33")));
        }
        if (o.containsKey("min-sdk")) b.setMinSdkVersion(Integer.parseInt(o.get("min-sdk")));
        b.build().sign();
    }

    private static void verify(String[] args) throws Exception {
        Integer minSdk = null;
        Integer maxSdk = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--min-sdk")) minSdk = Integer.parseInt(args[++i]);
            else if (args[i].equals("--max-sdk")) maxSdk = Integer.parseInt(args[++i]);
            else {
                System.out.println(verdict(args[i], minSdk, maxSdk));
                minSdk = null;
                maxSdk = null;
            }
        }
    }

    private static String verdict(String file, Integer minSdk, Integer maxSdk) throws Exception {
        ApkVerifier.Builder b = new ApkVerifier.Builder(new File(file));
        if (minSdk != null) b.setMinCheckedPlatformVersion(minSdk);
        if (maxSdk != null) b.setMaxCheckedPlatformVersion(maxSdk);
        ApkVerifier.Result r;
        try {
            r = b.build().verify();
        } catch (Exception e) {
            // apksigner reports these the same way: the APK does not verify.
            return "{\"verified\":false,\"exception\":" + str(e.toString()) + "}";
        }
        StringBuilder s = new StringBuilder("{\"verified\":").append(r.isVerified());
        s.append(",\"schemes\":{\"v1\":").append(r.isVerifiedUsingV1Scheme())
                .append(",\"v2\":").append(r.isVerifiedUsingV2Scheme())
                .append(",\"v3\":").append(r.isVerifiedUsingV3Scheme())
                .append(",\"v3.1\":").append(r.isVerifiedUsingV31Scheme()).append('}');
        s.append(",\"signers\":").append(sha256s(r.getSignerCertificates()));
        SigningCertificateLineage lineage = r.getSigningCertificateLineage();
        s.append(",\"lineage\":").append(lineage == null ? "[]" : sha256s(lineage.getCertificatesInLineage()));
        s.append(",\"errors\":").append(strings(r.getAllErrors()));
        s.append(",\"warnings\":").append(strings(r.getWarnings()));
        return s.append('}').toString();
    }

    private static String sha256s(List<X509Certificate> certs) throws Exception {
        List<String> out = new ArrayList<>();
        for (X509Certificate c : certs) {
            StringBuilder hex = new StringBuilder();
            for (byte x : MessageDigest.getInstance("SHA-256").digest(c.getEncoded())) hex.append(String.format("%02x", x));
            out.add(hex.toString());
        }
        return strings(out);
    }

    private static String strings(List<?> items) {
        StringBuilder s = new StringBuilder("[");
        for (Object item : items) {
            if (s.length() > 1) s.append(',');
            s.append(str(String.valueOf(item)));
        }
        return s.append(']').toString();
    }

    private static String str(String v) {
        StringBuilder s = new StringBuilder("\"");
        for (char c : v.toCharArray()) {
            if (c == '"' || c == '\\') s.append('\\').append(c);
            else if (c < 0x20) s.append(String.format("\\u%04x", (int) c));
            else s.append(c);
        }
        return s.append('"').toString();
    }
}
