"""The currencies the figure reader (`figures.py`) knows: data only.

`ISO_4217` is every alphabetic code of ISO 4217 list one as published in 2025, funds and
precious-metal codes included, and the codes still listed while they are phased out (ANG next to
XCG, SLL next to SLE, ZWL next to ZWG).  A code is read as a currency before or after an amount
("JPY 5000", "5000 jpy"); the few that are also everyday English words (`WORD_CODES`: "all 3",
"top 10", "1 cup") count only when written in capitals.

`SYMBOLS`, `WORDS_EN` and `WORDS_ZH` map the other ways of naming money to the code they stand
for, or to a family name when they name no single currency ("$": any dollar, "¥": yen or yuan,
"rupees", "francs").
"""

from __future__ import annotations

from typing import Final

__all__ = ["ISO_4217", "SYMBOLS", "WORDS_EN", "WORDS_ZH", "WORD_CODES"]

ISO_4217: Final = frozenset(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN
    BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN
    ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD
    JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT
    MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG
    QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS
    TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU
    XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XTS XUA XXX YER ZAR ZMW ZWG ZWL
    """.split()
)

# Codes that are everyday English words: money only in capitals ("TOP 500", not "the top 3").
WORD_CODES: Final = frozenset(
    {"ALL", "BAM", "BOB", "CAD", "COP", "CUP", "ERN", "GEL", "MAD", "MOP", "PEN", "RON", "SOS", "TOP", "TRY", "XXX"}
)

# Symbols, before or after the amount; the prefixed dollar forms come before it only.
SYMBOLS: Final = {
    "us$": "USD",
    "hk$": "HKD",
    "a$": "AUD",
    "au$": "AUD",
    "c$": "CAD",
    "ca$": "CAD",
    "s$": "SGD",
    "nt$": "TWD",
    "r$": "BRL",
    "nz$": "NZD",
    "$": "$",
    "€": "EUR",
    "£": "GBP",
    "¥": "¥",
    "₩": "KRW",
    "₹": "INR",
    "₽": "RUB",
    "₺": "TRY",
    "₫": "VND",
    "฿": "THB",
    "₱": "PHP",
    "₪": "ILS",
    "₴": "UAH",
    "₦": "NGN",
    "rmb": "CNY",
    "rs.": "rupee",
    "rs": "rupee",
}

# English names after the amount ("forty bucks", "5000 yen"); singular and plural.
WORDS_EN: Final = {
    "dollars": "$",
    "dollar": "$",
    "bucks": "$",
    "buck": "$",
    "euros": "EUR",
    "euro": "EUR",
    "quid": "GBP",
    "pounds": "GBP",
    "pound": "GBP",
    "sterling": "GBP",
    "yen": "JPY",
    "yuan": "CNY",
    "renminbi": "CNY",
    "rmb": "CNY",
    "rupees": "rupee",
    "rupee": "rupee",
    "francs": "franc",
    "franc": "franc",
    "pesos": "peso",
    "peso": "peso",
    "won": "KRW",
    "baht": "THB",
    "rubles": "RUB",
    "roubles": "RUB",
    "ringgit": "MYR",
    "kronor": "krona",
    "krona": "krona",
    "kroner": "krone",
    "krone": "krone",
    "kr": "krone",
    "zloty": "PLN",
    "lira": "TRY",
    "rand": "ZAR",
    "dirhams": "AED",
    "dirham": "AED",
    "reais": "BRL",
}

# Chinese names after the amount.  块 is money only where a phrase ends (`figures.py`).
WORDS_ZH: Final = {
    "人民币": "CNY",
    "块钱": "CNY",
    "元钱": "CNY",
    "元": "CNY",
    "圆": "CNY",
    "块": "CNY",
    "美元": "USD",
    "美金": "USD",
    "欧元": "EUR",
    "英镑": "GBP",
    "日元": "JPY",
    "日币": "JPY",
    "港币": "HKD",
    "港元": "HKD",
    "韩元": "KRW",
    "澳元": "AUD",
    "加元": "CAD",
    "新台币": "TWD",
    "台币": "TWD",
    "新加坡元": "SGD",
    "瑞士法郎": "CHF",
    "法郎": "franc",
    "卢比": "rupee",
    "卢布": "RUB",
    "泰铢": "THB",
}
