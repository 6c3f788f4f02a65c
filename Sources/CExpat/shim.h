#ifndef FEEDINGEST_CEXPAT_SHIM_H
#define FEEDINGEST_CEXPAT_SHIM_H
// Debian's libexpat is built with XML_DTD; expat.h declares the billion-laughs protection setters
// (XML_SetBillionLaughsAttackProtection*) only when XML_DTD is defined, so define it before including.
// ExpatXMLTests checks at run time, through XML_GetFeatureList, that the library really has XML_DTD.
#ifndef XML_DTD
#define XML_DTD 1
#endif
#include <expat.h>
#endif
