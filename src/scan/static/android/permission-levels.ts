/**
 * Android's runtime ("dangerous") permissions: the platform permissions whose protectionLevel is `dangerous`, so the
 * user is asked at run time and the app reaches personal data or device features with them. API 29 and earlier come
 * from the platform's own manifest (framework-res.apk, which the tests read as the oracle); later ones from the
 * Manifest.permission reference (https://developer.android.com/reference/android/Manifest.permission), each with the
 * level that added it.
 */
export const DANGEROUS_PERMISSIONS: ReadonlyMap<string, number> = new Map([
  ...[
    'ACCEPT_HANDOVER', 'ACCESS_BACKGROUND_LOCATION', 'ACCESS_COARSE_LOCATION', 'ACCESS_FINE_LOCATION', 'ACCESS_MEDIA_LOCATION',
    'ACTIVITY_RECOGNITION', 'ANSWER_PHONE_CALLS', 'BODY_SENSORS', 'CALL_PHONE', 'CAMERA', 'GET_ACCOUNTS', 'PROCESS_OUTGOING_CALLS',
    'READ_CALENDAR', 'READ_CALL_LOG', 'READ_CELL_BROADCASTS', 'READ_CONTACTS', 'READ_EXTERNAL_STORAGE', 'READ_PHONE_NUMBERS',
    'READ_PHONE_STATE', 'READ_SMS', 'RECEIVE_MMS', 'RECEIVE_SMS', 'RECEIVE_WAP_PUSH', 'RECORD_AUDIO', 'SEND_SMS', 'USE_SIP',
    'WRITE_CALENDAR', 'WRITE_CALL_LOG', 'WRITE_CONTACTS', 'WRITE_EXTERNAL_STORAGE',
  ].map((p) => [`android.permission.${p}`, 1] as const),
  ['com.android.voicemail.permission.ADD_VOICEMAIL', 1],
  ['android.permission.BLUETOOTH_ADVERTISE', 31],
  ['android.permission.BLUETOOTH_CONNECT', 31],
  ['android.permission.BLUETOOTH_SCAN', 31],
  ['android.permission.UWB_RANGING', 31],
  ['android.permission.BODY_SENSORS_BACKGROUND', 33],
  ['android.permission.NEARBY_WIFI_DEVICES', 33],
  ['android.permission.POST_NOTIFICATIONS', 33],
  ['android.permission.READ_MEDIA_AUDIO', 33],
  ['android.permission.READ_MEDIA_IMAGES', 33],
  ['android.permission.READ_MEDIA_VIDEO', 33],
  ['android.permission.READ_MEDIA_VISUAL_USER_SELECTED', 34],
]);

/**
 * Permissions that give an app power over the device or other apps beyond a runtime prompt: special app access the
 * user grants in Settings (overlays, installing packages, all files, accessibility, device admin), SMS access, which
 * Google Play restricts to default SMS handlers, and the package visibility Play restricts to apps that need it.
 * The BIND_* ones are declared as the android:permission of the app's own <service>/<receiver>, not requested.
 */
export const SPECIAL_PERMISSIONS: ReadonlyMap<string, { why: string; fix: string }> = new Map([
  ['android.permission.SYSTEM_ALERT_WINDOW', { why: 'draws over other apps, the basis of overlay (tapjacking) attacks', fix: 'Use in-app UI or a notification; if an overlay is essential, request it only when the feature is used (Settings.ACTION_MANAGE_OVERLAY_PERMISSION).' }],
  ['android.permission.REQUEST_INSTALL_PACKAGES', { why: 'asks the user to install other APKs; Google Play allows it only for apps whose core purpose is installing packages', fix: 'Remove it and update through Google Play (in-app updates: com.google.android.play:app-update).' }],
  ['android.permission.QUERY_ALL_PACKAGES', { why: 'sees every installed app; Google Play allows it only for apps that need broad visibility and asks for a declaration', fix: 'Remove it and declare the apps or intents you interact with in a <queries> element.' }],
  ['android.permission.MANAGE_EXTERNAL_STORAGE', { why: 'reads and writes all shared storage ("All files access"); Google Play restricts it to file managers, backup and similar apps', fix: 'Use MediaStore or the Storage Access Framework (ACTION_OPEN_DOCUMENT) for the files the app needs.' }],
  ['android.permission.READ_SMS', { why: 'reads the SMS inbox, one-time codes included; Google Play restricts SMS permissions to default SMS handlers', fix: 'Use the SMS User Consent API or SMS Retriever API for one-time codes instead.' }],
  ['android.permission.RECEIVE_SMS', { why: 'receives every incoming SMS, one-time codes included; Google Play restricts SMS permissions to default SMS handlers', fix: 'Use the SMS Retriever API (com.google.android.gms:play-services-auth-api-phone) for verification codes.' }],
  ['android.permission.SEND_SMS', { why: 'sends SMS without the user seeing them (premium-rate fraud); Google Play restricts SMS permissions to default SMS handlers', fix: 'Open the user\'s SMS app with an ACTION_SENDTO intent (smsto:) instead of sending directly.' }],
  ['android.permission.BIND_ACCESSIBILITY_SERVICE', { why: 'an accessibility service reads the screen of every app and acts on it; Google Play requires an accessibility declaration', fix: 'Remove the accessibility service unless the app helps users with disabilities, and declare it in Play Console if it does.' }],
  ['android.permission.BIND_DEVICE_ADMIN', { why: 'a device administrator can lock or wipe the device and resists uninstallation', fix: 'Use the Android Enterprise APIs (a device policy controller) or remove the device admin receiver.' }],
]);
