import type { RecognisedSdk } from '../../model/types';

/**
 * Third-party SDKs recognised by the names they leave in a package: Java packages of their classes (DEX type names),
 * native library file names, and iOS framework names. A name matches a Java package when it is that package or one
 * inside it. Only SDKs whose names are their own (no common words) are listed, so that a match is evidence, not a
 * guess; the inventory says which name gave each one away.
 */
type SdkSignature = { name: string; javaPackages?: string[]; nativeLibraries?: string[]; frameworks?: string[] };

const CATALOG: readonly SdkSignature[] = [
  { name: 'Firebase', javaPackages: ['com.google.firebase'], frameworks: ['FirebaseCore', 'FirebaseAnalytics', 'FirebaseMessaging', 'FirebaseCrashlytics'] },
  { name: 'Google Play services', javaPackages: ['com.google.android.gms'] },
  { name: 'Google Mobile Ads', javaPackages: ['com.google.android.gms.ads'], frameworks: ['GoogleMobileAds'] },
  { name: 'Facebook SDK', javaPackages: ['com.facebook.appevents', 'com.facebook.login', 'com.facebook.share'], frameworks: ['FBSDKCoreKit', 'FBSDKLoginKit', 'FBAEMKit'] },
  { name: 'AppsFlyer', javaPackages: ['com.appsflyer'], frameworks: ['AppsFlyerLib'] },
  { name: 'Adjust', javaPackages: ['com.adjust.sdk'], frameworks: ['AdjustSdk'] },
  { name: 'Branch', javaPackages: ['io.branch.referral'], frameworks: ['BranchSDK', 'Branch'] },
  { name: 'OneSignal', javaPackages: ['com.onesignal'], frameworks: ['OneSignalFramework', 'OneSignal'] },
  { name: 'Sentry', javaPackages: ['io.sentry'], nativeLibraries: ['libsentry.so', 'libsentry-android.so'], frameworks: ['Sentry'] },
  { name: 'Bugsnag', javaPackages: ['com.bugsnag'], nativeLibraries: ['libbugsnag-ndk.so'], frameworks: ['Bugsnag'] },
  { name: 'Datadog', javaPackages: ['com.datadog.android'], frameworks: ['DatadogCore'] },
  { name: 'New Relic', javaPackages: ['com.newrelic.agent'], frameworks: ['NewRelic'] },
  { name: 'Mixpanel', javaPackages: ['com.mixpanel.android'], frameworks: ['Mixpanel'] },
  { name: 'Amplitude', javaPackages: ['com.amplitude'], frameworks: ['Amplitude', 'AmplitudeSwift'] },
  { name: 'Segment', javaPackages: ['com.segment.analytics'], frameworks: ['Segment'] },
  { name: 'Braze', javaPackages: ['com.braze', 'com.appboy'], frameworks: ['BrazeKit', 'Appboy_iOS_SDK'] },
  { name: 'Stripe', javaPackages: ['com.stripe.android'], frameworks: ['Stripe', 'StripeCore', 'StripePaymentSheet'] },
  { name: 'PayPal', javaPackages: ['com.paypal'], frameworks: ['PayPalCheckout', 'CorePayments'] },
  { name: 'Unity Ads', javaPackages: ['com.unity3d.ads', 'com.unity3d.services'], frameworks: ['UnityAds'] },
  { name: 'AppLovin', javaPackages: ['com.applovin'], frameworks: ['AppLovinSDK'] },
  { name: 'ironSource', javaPackages: ['com.ironsource'], frameworks: ['IronSource'] },
  { name: 'Huawei Mobile Services', javaPackages: ['com.huawei.hms'] },
  { name: 'Tencent Bugly', javaPackages: ['com.tencent.bugly'], nativeLibraries: ['libBugly.so'] },
  { name: 'Flutter', javaPackages: ['io.flutter'], nativeLibraries: ['libflutter.so'], frameworks: ['Flutter'] },
  { name: 'React Native', javaPackages: ['com.facebook.react'], nativeLibraries: ['libreactnativejni.so', 'libhermes.so'], frameworks: ['React', 'hermes'] },
  { name: 'Unity', javaPackages: ['com.unity3d.player'], nativeLibraries: ['libunity.so', 'libil2cpp.so'], frameworks: ['UnityFramework'] },
  { name: '.NET MAUI / Xamarin', javaPackages: ['mono.android'], nativeLibraries: ['libmonodroid.so', 'libmonosgen-2.0.so'], frameworks: ['Xamarin'] },
  { name: 'Apache Cordova', javaPackages: ['org.apache.cordova'], frameworks: ['Cordova'] },
  { name: 'Capacitor', javaPackages: ['com.getcapacitor'], frameworks: ['Capacitor'] },
  { name: 'OkHttp', javaPackages: ['okhttp3'] },
  { name: 'Retrofit', javaPackages: ['retrofit2'] },
  { name: 'Realm', javaPackages: ['io.realm'], nativeLibraries: ['librealm-jni.so'], frameworks: ['Realm', 'RealmSwift'] },
  { name: 'Lottie', javaPackages: ['com.airbnb.lottie'], frameworks: ['Lottie'] },
  { name: 'Alamofire', frameworks: ['Alamofire'] },
  { name: 'SDWebImage', frameworks: ['SDWebImage'] },
  { name: 'SQLCipher', javaPackages: ['net.sqlcipher', 'net.zetetic.database.sqlcipher'], nativeLibraries: ['libsqlcipher.so'], frameworks: ['SQLCipher'] },
];

export type SdkEvidence = { javaPackages?: readonly string[]; nativeLibraries?: readonly string[]; frameworks?: readonly string[] };

/** The SDKs the names give away, in catalogue order, each with the first name that matched. */
export function recogniseSdks(found: SdkEvidence): RecognisedSdk[] {
  const packages = [...(found.javaPackages ?? [])].sort();
  const libraries = new Set((found.nativeLibraries ?? []).map((p) => p.slice(p.lastIndexOf('/') + 1)));
  const frameworks = new Set(found.frameworks ?? []);
  const out: RecognisedSdk[] = [];
  for (const sdk of CATALOG) {
    const pkg = sdk.javaPackages?.map((prefix) => packages.find((p) => p === prefix || p.startsWith(`${prefix}.`)) && prefix).find(Boolean);
    const lib = sdk.nativeLibraries?.find((name) => libraries.has(name));
    const framework = sdk.frameworks?.find((name) => frameworks.has(name));
    const evidence = pkg ? `DEX classes in package ${pkg}` : lib ? `native library ${lib}` : framework ? `framework ${framework}.framework` : null;
    if (evidence) out.push({ name: sdk.name, evidence });
  }
  return out;
}
