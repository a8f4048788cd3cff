/** The client's version (client/package.json; a unit test holds them equal). A constant, so a bundle carries it. */
export const VERSION = '1.0.0';
