# Generated from CEL.g4 by ANTLR 4.13.1
# encoding: utf-8
from antlr4 import *
from io import StringIO
import sys
if sys.version_info[1] > 5:
	from typing import TextIO
else:
	from typing.io import TextIO

def serializedATN():
    return [
        4,1,37,259,2,0,7,0,2,1,7,1,2,2,7,2,2,3,7,3,2,4,7,4,2,5,7,5,2,6,7,
        6,2,7,7,7,2,8,7,8,2,9,7,9,2,10,7,10,2,11,7,11,2,12,7,12,2,13,7,13,
        2,14,7,14,2,15,7,15,2,16,7,16,1,0,1,0,1,0,1,1,1,1,1,1,1,1,1,1,1,
        1,3,1,44,8,1,1,2,1,2,1,2,5,2,49,8,2,10,2,12,2,52,9,2,1,3,1,3,1,3,
        5,3,57,8,3,10,3,12,3,60,9,3,1,4,1,4,1,4,1,4,1,4,1,4,5,4,68,8,4,10,
        4,12,4,71,9,4,1,5,1,5,1,5,1,5,1,5,1,5,1,5,1,5,1,5,5,5,82,8,5,10,
        5,12,5,85,9,5,1,6,1,6,4,6,89,8,6,11,6,12,6,90,1,6,1,6,4,6,95,8,6,
        11,6,12,6,96,1,6,3,6,100,8,6,1,7,1,7,1,7,1,7,1,7,1,7,3,7,108,8,7,
        1,7,1,7,1,7,1,7,1,7,1,7,3,7,116,8,7,1,7,1,7,1,7,1,7,3,7,122,8,7,
        1,7,1,7,1,7,5,7,127,8,7,10,7,12,7,130,9,7,1,8,3,8,133,8,8,1,8,1,
        8,3,8,137,8,8,1,8,1,8,1,8,3,8,142,8,8,1,8,1,8,1,8,1,8,1,8,1,8,1,
        8,3,8,151,8,8,1,8,3,8,154,8,8,1,8,1,8,1,8,3,8,159,8,8,1,8,3,8,162,
        8,8,1,8,1,8,3,8,166,8,8,1,8,1,8,1,8,5,8,171,8,8,10,8,12,8,174,9,
        8,1,8,1,8,3,8,178,8,8,1,8,3,8,181,8,8,1,8,1,8,3,8,185,8,8,1,9,1,
        9,1,9,5,9,190,8,9,10,9,12,9,193,9,9,1,10,1,10,1,10,5,10,198,8,10,
        10,10,12,10,201,9,10,1,11,1,11,1,11,1,11,1,11,1,11,1,11,1,11,5,11,
        211,8,11,10,11,12,11,214,9,11,1,12,3,12,217,8,12,1,12,1,12,1,13,
        1,13,1,13,1,13,1,13,1,13,1,13,1,13,5,13,229,8,13,10,13,12,13,232,
        9,13,1,14,1,14,3,14,236,8,14,1,15,3,15,239,8,15,1,15,1,15,1,16,3,
        16,244,8,16,1,16,1,16,1,16,3,16,249,8,16,1,16,1,16,1,16,1,16,1,16,
        1,16,3,16,257,8,16,1,16,0,3,8,10,14,17,0,2,4,6,8,10,12,14,16,18,
        20,22,24,26,28,30,32,0,3,1,0,1,7,1,0,23,25,2,0,18,18,22,22,290,0,
        34,1,0,0,0,2,37,1,0,0,0,4,45,1,0,0,0,6,53,1,0,0,0,8,61,1,0,0,0,10,
        72,1,0,0,0,12,99,1,0,0,0,14,101,1,0,0,0,16,184,1,0,0,0,18,186,1,
        0,0,0,20,194,1,0,0,0,22,202,1,0,0,0,24,216,1,0,0,0,26,220,1,0,0,
        0,28,235,1,0,0,0,30,238,1,0,0,0,32,256,1,0,0,0,34,35,3,2,1,0,35,
        36,5,0,0,1,36,1,1,0,0,0,37,43,3,4,2,0,38,39,5,20,0,0,39,40,3,4,2,
        0,40,41,5,21,0,0,41,42,3,2,1,0,42,44,1,0,0,0,43,38,1,0,0,0,43,44,
        1,0,0,0,44,3,1,0,0,0,45,50,3,6,3,0,46,47,5,9,0,0,47,49,3,6,3,0,48,
        46,1,0,0,0,49,52,1,0,0,0,50,48,1,0,0,0,50,51,1,0,0,0,51,5,1,0,0,
        0,52,50,1,0,0,0,53,58,3,8,4,0,54,55,5,8,0,0,55,57,3,8,4,0,56,54,
        1,0,0,0,57,60,1,0,0,0,58,56,1,0,0,0,58,59,1,0,0,0,59,7,1,0,0,0,60,
        58,1,0,0,0,61,62,6,4,-1,0,62,63,3,10,5,0,63,69,1,0,0,0,64,65,10,
        1,0,0,65,66,7,0,0,0,66,68,3,8,4,2,67,64,1,0,0,0,68,71,1,0,0,0,69,
        67,1,0,0,0,69,70,1,0,0,0,70,9,1,0,0,0,71,69,1,0,0,0,72,73,6,5,-1,
        0,73,74,3,12,6,0,74,83,1,0,0,0,75,76,10,2,0,0,76,77,7,1,0,0,77,82,
        3,10,5,3,78,79,10,1,0,0,79,80,7,2,0,0,80,82,3,10,5,2,81,75,1,0,0,
        0,81,78,1,0,0,0,82,85,1,0,0,0,83,81,1,0,0,0,83,84,1,0,0,0,84,11,
        1,0,0,0,85,83,1,0,0,0,86,100,3,14,7,0,87,89,5,19,0,0,88,87,1,0,0,
        0,89,90,1,0,0,0,90,88,1,0,0,0,90,91,1,0,0,0,91,92,1,0,0,0,92,100,
        3,14,7,0,93,95,5,18,0,0,94,93,1,0,0,0,95,96,1,0,0,0,96,94,1,0,0,
        0,96,97,1,0,0,0,97,98,1,0,0,0,98,100,3,14,7,0,99,86,1,0,0,0,99,88,
        1,0,0,0,99,94,1,0,0,0,100,13,1,0,0,0,101,102,6,7,-1,0,102,103,3,
        16,8,0,103,128,1,0,0,0,104,105,10,3,0,0,105,107,5,16,0,0,106,108,
        5,20,0,0,107,106,1,0,0,0,107,108,1,0,0,0,108,109,1,0,0,0,109,127,
        3,28,14,0,110,111,10,2,0,0,111,112,5,16,0,0,112,113,5,36,0,0,113,
        115,5,14,0,0,114,116,3,18,9,0,115,114,1,0,0,0,115,116,1,0,0,0,116,
        117,1,0,0,0,117,127,5,15,0,0,118,119,10,1,0,0,119,121,5,10,0,0,120,
        122,5,20,0,0,121,120,1,0,0,0,121,122,1,0,0,0,122,123,1,0,0,0,123,
        124,3,2,1,0,124,125,5,11,0,0,125,127,1,0,0,0,126,104,1,0,0,0,126,
        110,1,0,0,0,126,118,1,0,0,0,127,130,1,0,0,0,128,126,1,0,0,0,128,
        129,1,0,0,0,129,15,1,0,0,0,130,128,1,0,0,0,131,133,5,16,0,0,132,
        131,1,0,0,0,132,133,1,0,0,0,133,134,1,0,0,0,134,185,5,36,0,0,135,
        137,5,16,0,0,136,135,1,0,0,0,136,137,1,0,0,0,137,138,1,0,0,0,138,
        139,5,36,0,0,139,141,5,14,0,0,140,142,3,18,9,0,141,140,1,0,0,0,141,
        142,1,0,0,0,142,143,1,0,0,0,143,185,5,15,0,0,144,145,5,14,0,0,145,
        146,3,2,1,0,146,147,5,15,0,0,147,185,1,0,0,0,148,150,5,10,0,0,149,
        151,3,20,10,0,150,149,1,0,0,0,150,151,1,0,0,0,151,153,1,0,0,0,152,
        154,5,17,0,0,153,152,1,0,0,0,153,154,1,0,0,0,154,155,1,0,0,0,155,
        185,5,11,0,0,156,158,5,12,0,0,157,159,3,26,13,0,158,157,1,0,0,0,
        158,159,1,0,0,0,159,161,1,0,0,0,160,162,5,17,0,0,161,160,1,0,0,0,
        161,162,1,0,0,0,162,163,1,0,0,0,163,185,5,13,0,0,164,166,5,16,0,
        0,165,164,1,0,0,0,165,166,1,0,0,0,166,167,1,0,0,0,167,172,5,36,0,
        0,168,169,5,16,0,0,169,171,5,36,0,0,170,168,1,0,0,0,171,174,1,0,
        0,0,172,170,1,0,0,0,172,173,1,0,0,0,173,175,1,0,0,0,174,172,1,0,
        0,0,175,177,5,12,0,0,176,178,3,22,11,0,177,176,1,0,0,0,177,178,1,
        0,0,0,178,180,1,0,0,0,179,181,5,17,0,0,180,179,1,0,0,0,180,181,1,
        0,0,0,181,182,1,0,0,0,182,185,5,13,0,0,183,185,3,32,16,0,184,132,
        1,0,0,0,184,136,1,0,0,0,184,144,1,0,0,0,184,148,1,0,0,0,184,156,
        1,0,0,0,184,165,1,0,0,0,184,183,1,0,0,0,185,17,1,0,0,0,186,191,3,
        2,1,0,187,188,5,17,0,0,188,190,3,2,1,0,189,187,1,0,0,0,190,193,1,
        0,0,0,191,189,1,0,0,0,191,192,1,0,0,0,192,19,1,0,0,0,193,191,1,0,
        0,0,194,199,3,30,15,0,195,196,5,17,0,0,196,198,3,30,15,0,197,195,
        1,0,0,0,198,201,1,0,0,0,199,197,1,0,0,0,199,200,1,0,0,0,200,21,1,
        0,0,0,201,199,1,0,0,0,202,203,3,24,12,0,203,204,5,21,0,0,204,212,
        3,2,1,0,205,206,5,17,0,0,206,207,3,24,12,0,207,208,5,21,0,0,208,
        209,3,2,1,0,209,211,1,0,0,0,210,205,1,0,0,0,211,214,1,0,0,0,212,
        210,1,0,0,0,212,213,1,0,0,0,213,23,1,0,0,0,214,212,1,0,0,0,215,217,
        5,20,0,0,216,215,1,0,0,0,216,217,1,0,0,0,217,218,1,0,0,0,218,219,
        3,28,14,0,219,25,1,0,0,0,220,221,3,30,15,0,221,222,5,21,0,0,222,
        230,3,2,1,0,223,224,5,17,0,0,224,225,3,30,15,0,225,226,5,21,0,0,
        226,227,3,2,1,0,227,229,1,0,0,0,228,223,1,0,0,0,229,232,1,0,0,0,
        230,228,1,0,0,0,230,231,1,0,0,0,231,27,1,0,0,0,232,230,1,0,0,0,233,
        236,5,36,0,0,234,236,5,37,0,0,235,233,1,0,0,0,235,234,1,0,0,0,236,
        29,1,0,0,0,237,239,5,20,0,0,238,237,1,0,0,0,238,239,1,0,0,0,239,
        240,1,0,0,0,240,241,3,2,1,0,241,31,1,0,0,0,242,244,5,18,0,0,243,
        242,1,0,0,0,243,244,1,0,0,0,244,245,1,0,0,0,245,257,5,32,0,0,246,
        257,5,33,0,0,247,249,5,18,0,0,248,247,1,0,0,0,248,249,1,0,0,0,249,
        250,1,0,0,0,250,257,5,31,0,0,251,257,5,34,0,0,252,257,5,35,0,0,253,
        257,5,26,0,0,254,257,5,27,0,0,255,257,5,28,0,0,256,243,1,0,0,0,256,
        246,1,0,0,0,256,248,1,0,0,0,256,251,1,0,0,0,256,252,1,0,0,0,256,
        253,1,0,0,0,256,254,1,0,0,0,256,255,1,0,0,0,257,33,1,0,0,0,36,43,
        50,58,69,81,83,90,96,99,107,115,121,126,128,132,136,141,150,153,
        158,161,165,172,177,180,184,191,199,212,216,230,235,238,243,248,
        256
    ]

class CELParser ( Parser ):

    grammarFileName = "CEL.g4"

    atn = ATNDeserializer().deserialize(serializedATN())

    decisionsToDFA = [ DFA(ds, i) for i, ds in enumerate(atn.decisionToState) ]

    sharedContextCache = PredictionContextCache()

    literalNames = [ "<INVALID>", "'=='", "'!='", "'in'", "'<'", "'<='", 
                     "'>='", "'>'", "'&&'", "'||'", "'['", "']'", "'{'", 
                     "'}'", "'('", "')'", "'.'", "','", "'-'", "'!'", "'?'", 
                     "':'", "'+'", "'*'", "'/'", "'%'", "'true'", "'false'", 
                     "'null'" ]

    symbolicNames = [ "<INVALID>", "EQUALS", "NOT_EQUALS", "IN", "LESS", 
                      "LESS_EQUALS", "GREATER_EQUALS", "GREATER", "LOGICAL_AND", 
                      "LOGICAL_OR", "LBRACKET", "RPRACKET", "LBRACE", "RBRACE", 
                      "LPAREN", "RPAREN", "DOT", "COMMA", "MINUS", "EXCLAM", 
                      "QUESTIONMARK", "COLON", "PLUS", "STAR", "SLASH", 
                      "PERCENT", "CEL_TRUE", "CEL_FALSE", "NUL", "WHITESPACE", 
                      "COMMENT", "NUM_FLOAT", "NUM_INT", "NUM_UINT", "STRING", 
                      "BYTES", "IDENTIFIER", "ESC_IDENTIFIER" ]

    RULE_start = 0
    RULE_expr = 1
    RULE_conditionalOr = 2
    RULE_conditionalAnd = 3
    RULE_relation = 4
    RULE_calc = 5
    RULE_unary = 6
    RULE_member = 7
    RULE_primary = 8
    RULE_exprList = 9
    RULE_listInit = 10
    RULE_fieldInitializerList = 11
    RULE_optField = 12
    RULE_mapInitializerList = 13
    RULE_escapeIdent = 14
    RULE_optExpr = 15
    RULE_literal = 16

    ruleNames =  [ "start", "expr", "conditionalOr", "conditionalAnd", "relation", 
                   "calc", "unary", "member", "primary", "exprList", "listInit", 
                   "fieldInitializerList", "optField", "mapInitializerList", 
                   "escapeIdent", "optExpr", "literal" ]

    EOF = Token.EOF
    EQUALS=1
    NOT_EQUALS=2
    IN=3
    LESS=4
    LESS_EQUALS=5
    GREATER_EQUALS=6
    GREATER=7
    LOGICAL_AND=8
    LOGICAL_OR=9
    LBRACKET=10
    RPRACKET=11
    LBRACE=12
    RBRACE=13
    LPAREN=14
    RPAREN=15
    DOT=16
    COMMA=17
    MINUS=18
    EXCLAM=19
    QUESTIONMARK=20
    COLON=21
    PLUS=22
    STAR=23
    SLASH=24
    PERCENT=25
    CEL_TRUE=26
    CEL_FALSE=27
    NUL=28
    WHITESPACE=29
    COMMENT=30
    NUM_FLOAT=31
    NUM_INT=32
    NUM_UINT=33
    STRING=34
    BYTES=35
    IDENTIFIER=36
    ESC_IDENTIFIER=37

    def __init__(self, input:TokenStream, output:TextIO = sys.stdout):
        super().__init__(input, output)
        self.checkVersion("4.13.1")
        self._interp = ParserATNSimulator(self, self.atn, self.decisionsToDFA, self.sharedContextCache)
        self._predicates = None




    class StartContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self.e = None # ExprContext

        def EOF(self):
            return self.getToken(CELParser.EOF, 0)

        def expr(self):
            return self.getTypedRuleContext(CELParser.ExprContext,0)


        def getRuleIndex(self):
            return CELParser.RULE_start




    def start(self):

        localctx = CELParser.StartContext(self, self._ctx, self.state)
        self.enterRule(localctx, 0, self.RULE_start)
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 34
            localctx.e = self.expr()
            self.state = 35
            self.match(CELParser.EOF)
        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class ExprContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self.e = None # ConditionalOrContext
            self.op = None # Token
            self.e1 = None # ConditionalOrContext
            self.e2 = None # ExprContext

        def conditionalOr(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.ConditionalOrContext)
            else:
                return self.getTypedRuleContext(CELParser.ConditionalOrContext,i)


        def COLON(self):
            return self.getToken(CELParser.COLON, 0)

        def QUESTIONMARK(self):
            return self.getToken(CELParser.QUESTIONMARK, 0)

        def expr(self):
            return self.getTypedRuleContext(CELParser.ExprContext,0)


        def getRuleIndex(self):
            return CELParser.RULE_expr




    def expr(self):

        localctx = CELParser.ExprContext(self, self._ctx, self.state)
        self.enterRule(localctx, 2, self.RULE_expr)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 37
            localctx.e = self.conditionalOr()
            self.state = 43
            self._errHandler.sync(self)
            _la = self._input.LA(1)
            if _la==20:
                self.state = 38
                localctx.op = self.match(CELParser.QUESTIONMARK)
                self.state = 39
                localctx.e1 = self.conditionalOr()
                self.state = 40
                self.match(CELParser.COLON)
                self.state = 41
                localctx.e2 = self.expr()


        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class ConditionalOrContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self.e = None # ConditionalAndContext
            self.s9 = None # Token
            self.ops = list() # of Tokens
            self._conditionalAnd = None # ConditionalAndContext
            self.e1 = list() # of ConditionalAndContexts

        def conditionalAnd(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.ConditionalAndContext)
            else:
                return self.getTypedRuleContext(CELParser.ConditionalAndContext,i)


        def LOGICAL_OR(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.LOGICAL_OR)
            else:
                return self.getToken(CELParser.LOGICAL_OR, i)

        def getRuleIndex(self):
            return CELParser.RULE_conditionalOr




    def conditionalOr(self):

        localctx = CELParser.ConditionalOrContext(self, self._ctx, self.state)
        self.enterRule(localctx, 4, self.RULE_conditionalOr)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 45
            localctx.e = self.conditionalAnd()
            self.state = 50
            self._errHandler.sync(self)
            _la = self._input.LA(1)
            while _la==9:
                self.state = 46
                localctx.s9 = self.match(CELParser.LOGICAL_OR)
                localctx.ops.append(localctx.s9)
                self.state = 47
                localctx._conditionalAnd = self.conditionalAnd()
                localctx.e1.append(localctx._conditionalAnd)
                self.state = 52
                self._errHandler.sync(self)
                _la = self._input.LA(1)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class ConditionalAndContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self.e = None # RelationContext
            self.s8 = None # Token
            self.ops = list() # of Tokens
            self._relation = None # RelationContext
            self.e1 = list() # of RelationContexts

        def relation(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.RelationContext)
            else:
                return self.getTypedRuleContext(CELParser.RelationContext,i)


        def LOGICAL_AND(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.LOGICAL_AND)
            else:
                return self.getToken(CELParser.LOGICAL_AND, i)

        def getRuleIndex(self):
            return CELParser.RULE_conditionalAnd




    def conditionalAnd(self):

        localctx = CELParser.ConditionalAndContext(self, self._ctx, self.state)
        self.enterRule(localctx, 6, self.RULE_conditionalAnd)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 53
            localctx.e = self.relation(0)
            self.state = 58
            self._errHandler.sync(self)
            _la = self._input.LA(1)
            while _la==8:
                self.state = 54
                localctx.s8 = self.match(CELParser.LOGICAL_AND)
                localctx.ops.append(localctx.s8)
                self.state = 55
                localctx._relation = self.relation(0)
                localctx.e1.append(localctx._relation)
                self.state = 60
                self._errHandler.sync(self)
                _la = self._input.LA(1)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class RelationContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self.op = None # Token

        def calc(self):
            return self.getTypedRuleContext(CELParser.CalcContext,0)


        def relation(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.RelationContext)
            else:
                return self.getTypedRuleContext(CELParser.RelationContext,i)


        def LESS(self):
            return self.getToken(CELParser.LESS, 0)

        def LESS_EQUALS(self):
            return self.getToken(CELParser.LESS_EQUALS, 0)

        def GREATER_EQUALS(self):
            return self.getToken(CELParser.GREATER_EQUALS, 0)

        def GREATER(self):
            return self.getToken(CELParser.GREATER, 0)

        def EQUALS(self):
            return self.getToken(CELParser.EQUALS, 0)

        def NOT_EQUALS(self):
            return self.getToken(CELParser.NOT_EQUALS, 0)

        def IN(self):
            return self.getToken(CELParser.IN, 0)

        def getRuleIndex(self):
            return CELParser.RULE_relation



    def relation(self, _p:int=0):
        _parentctx = self._ctx
        _parentState = self.state
        localctx = CELParser.RelationContext(self, self._ctx, _parentState)
        _prevctx = localctx
        _startState = 8
        self.enterRecursionRule(localctx, 8, self.RULE_relation, _p)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 62
            self.calc(0)
            self._ctx.stop = self._input.LT(-1)
            self.state = 69
            self._errHandler.sync(self)
            _alt = self._interp.adaptivePredict(self._input,3,self._ctx)
            while _alt!=2 and _alt!=ATN.INVALID_ALT_NUMBER:
                if _alt==1:
                    if self._parseListeners is not None:
                        self.triggerExitRuleEvent()
                    _prevctx = localctx
                    localctx = CELParser.RelationContext(self, _parentctx, _parentState)
                    self.pushNewRecursionContext(localctx, _startState, self.RULE_relation)
                    self.state = 64
                    if not self.precpred(self._ctx, 1):
                        from antlr4.error.Errors import FailedPredicateException
                        raise FailedPredicateException(self, "self.precpred(self._ctx, 1)")
                    self.state = 65
                    localctx.op = self._input.LT(1)
                    _la = self._input.LA(1)
                    if not((((_la) & ~0x3f) == 0 and ((1 << _la) & 254) != 0)):
                        localctx.op = self._errHandler.recoverInline(self)
                    else:
                        self._errHandler.reportMatch(self)
                        self.consume()
                    self.state = 66
                    self.relation(2) 
                self.state = 71
                self._errHandler.sync(self)
                _alt = self._interp.adaptivePredict(self._input,3,self._ctx)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.unrollRecursionContexts(_parentctx)
        return localctx


    class CalcContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self.op = None # Token

        def unary(self):
            return self.getTypedRuleContext(CELParser.UnaryContext,0)


        def calc(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.CalcContext)
            else:
                return self.getTypedRuleContext(CELParser.CalcContext,i)


        def STAR(self):
            return self.getToken(CELParser.STAR, 0)

        def SLASH(self):
            return self.getToken(CELParser.SLASH, 0)

        def PERCENT(self):
            return self.getToken(CELParser.PERCENT, 0)

        def PLUS(self):
            return self.getToken(CELParser.PLUS, 0)

        def MINUS(self):
            return self.getToken(CELParser.MINUS, 0)

        def getRuleIndex(self):
            return CELParser.RULE_calc



    def calc(self, _p:int=0):
        _parentctx = self._ctx
        _parentState = self.state
        localctx = CELParser.CalcContext(self, self._ctx, _parentState)
        _prevctx = localctx
        _startState = 10
        self.enterRecursionRule(localctx, 10, self.RULE_calc, _p)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 73
            self.unary()
            self._ctx.stop = self._input.LT(-1)
            self.state = 83
            self._errHandler.sync(self)
            _alt = self._interp.adaptivePredict(self._input,5,self._ctx)
            while _alt!=2 and _alt!=ATN.INVALID_ALT_NUMBER:
                if _alt==1:
                    if self._parseListeners is not None:
                        self.triggerExitRuleEvent()
                    _prevctx = localctx
                    self.state = 81
                    self._errHandler.sync(self)
                    la_ = self._interp.adaptivePredict(self._input,4,self._ctx)
                    if la_ == 1:
                        localctx = CELParser.CalcContext(self, _parentctx, _parentState)
                        self.pushNewRecursionContext(localctx, _startState, self.RULE_calc)
                        self.state = 75
                        if not self.precpred(self._ctx, 2):
                            from antlr4.error.Errors import FailedPredicateException
                            raise FailedPredicateException(self, "self.precpred(self._ctx, 2)")
                        self.state = 76
                        localctx.op = self._input.LT(1)
                        _la = self._input.LA(1)
                        if not((((_la) & ~0x3f) == 0 and ((1 << _la) & 58720256) != 0)):
                            localctx.op = self._errHandler.recoverInline(self)
                        else:
                            self._errHandler.reportMatch(self)
                            self.consume()
                        self.state = 77
                        self.calc(3)
                        pass

                    elif la_ == 2:
                        localctx = CELParser.CalcContext(self, _parentctx, _parentState)
                        self.pushNewRecursionContext(localctx, _startState, self.RULE_calc)
                        self.state = 78
                        if not self.precpred(self._ctx, 1):
                            from antlr4.error.Errors import FailedPredicateException
                            raise FailedPredicateException(self, "self.precpred(self._ctx, 1)")
                        self.state = 79
                        localctx.op = self._input.LT(1)
                        _la = self._input.LA(1)
                        if not(_la==18 or _la==22):
                            localctx.op = self._errHandler.recoverInline(self)
                        else:
                            self._errHandler.reportMatch(self)
                            self.consume()
                        self.state = 80
                        self.calc(2)
                        pass

             
                self.state = 85
                self._errHandler.sync(self)
                _alt = self._interp.adaptivePredict(self._input,5,self._ctx)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.unrollRecursionContexts(_parentctx)
        return localctx


    class UnaryContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser


        def getRuleIndex(self):
            return CELParser.RULE_unary

     
        def copyFrom(self, ctx:ParserRuleContext):
            super().copyFrom(ctx)



    class LogicalNotContext(UnaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.UnaryContext
            super().__init__(parser)
            self.s19 = None # Token
            self.ops = list() # of Tokens
            self.copyFrom(ctx)

        def member(self):
            return self.getTypedRuleContext(CELParser.MemberContext,0)

        def EXCLAM(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.EXCLAM)
            else:
                return self.getToken(CELParser.EXCLAM, i)


    class MemberExprContext(UnaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.UnaryContext
            super().__init__(parser)
            self.copyFrom(ctx)

        def member(self):
            return self.getTypedRuleContext(CELParser.MemberContext,0)



    class NegateContext(UnaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.UnaryContext
            super().__init__(parser)
            self.s18 = None # Token
            self.ops = list() # of Tokens
            self.copyFrom(ctx)

        def member(self):
            return self.getTypedRuleContext(CELParser.MemberContext,0)

        def MINUS(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.MINUS)
            else:
                return self.getToken(CELParser.MINUS, i)



    def unary(self):

        localctx = CELParser.UnaryContext(self, self._ctx, self.state)
        self.enterRule(localctx, 12, self.RULE_unary)
        self._la = 0 # Token type
        try:
            self.state = 99
            self._errHandler.sync(self)
            la_ = self._interp.adaptivePredict(self._input,8,self._ctx)
            if la_ == 1:
                localctx = CELParser.MemberExprContext(self, localctx)
                self.enterOuterAlt(localctx, 1)
                self.state = 86
                self.member(0)
                pass

            elif la_ == 2:
                localctx = CELParser.LogicalNotContext(self, localctx)
                self.enterOuterAlt(localctx, 2)
                self.state = 88 
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                while True:
                    self.state = 87
                    localctx.s19 = self.match(CELParser.EXCLAM)
                    localctx.ops.append(localctx.s19)
                    self.state = 90 
                    self._errHandler.sync(self)
                    _la = self._input.LA(1)
                    if not (_la==19):
                        break

                self.state = 92
                self.member(0)
                pass

            elif la_ == 3:
                localctx = CELParser.NegateContext(self, localctx)
                self.enterOuterAlt(localctx, 3)
                self.state = 94 
                self._errHandler.sync(self)
                _alt = 1
                while _alt!=2 and _alt!=ATN.INVALID_ALT_NUMBER:
                    if _alt == 1:
                        self.state = 93
                        localctx.s18 = self.match(CELParser.MINUS)
                        localctx.ops.append(localctx.s18)

                    else:
                        raise NoViableAltException(self)
                    self.state = 96 
                    self._errHandler.sync(self)
                    _alt = self._interp.adaptivePredict(self._input,7,self._ctx)

                self.state = 98
                self.member(0)
                pass


        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class MemberContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser


        def getRuleIndex(self):
            return CELParser.RULE_member

     
        def copyFrom(self, ctx:ParserRuleContext):
            super().copyFrom(ctx)


    class MemberCallContext(MemberContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.MemberContext
            super().__init__(parser)
            self.op = None # Token
            self.id_ = None # Token
            self.open_ = None # Token
            self.args = None # ExprListContext
            self.copyFrom(ctx)

        def member(self):
            return self.getTypedRuleContext(CELParser.MemberContext,0)

        def RPAREN(self):
            return self.getToken(CELParser.RPAREN, 0)
        def DOT(self):
            return self.getToken(CELParser.DOT, 0)
        def IDENTIFIER(self):
            return self.getToken(CELParser.IDENTIFIER, 0)
        def LPAREN(self):
            return self.getToken(CELParser.LPAREN, 0)
        def exprList(self):
            return self.getTypedRuleContext(CELParser.ExprListContext,0)



    class SelectContext(MemberContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.MemberContext
            super().__init__(parser)
            self.op = None # Token
            self.opt = None # Token
            self.id_ = None # EscapeIdentContext
            self.copyFrom(ctx)

        def member(self):
            return self.getTypedRuleContext(CELParser.MemberContext,0)

        def DOT(self):
            return self.getToken(CELParser.DOT, 0)
        def escapeIdent(self):
            return self.getTypedRuleContext(CELParser.EscapeIdentContext,0)

        def QUESTIONMARK(self):
            return self.getToken(CELParser.QUESTIONMARK, 0)


    class PrimaryExprContext(MemberContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.MemberContext
            super().__init__(parser)
            self.copyFrom(ctx)

        def primary(self):
            return self.getTypedRuleContext(CELParser.PrimaryContext,0)



    class IndexContext(MemberContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.MemberContext
            super().__init__(parser)
            self.op = None # Token
            self.opt = None # Token
            self.index = None # ExprContext
            self.copyFrom(ctx)

        def member(self):
            return self.getTypedRuleContext(CELParser.MemberContext,0)

        def RPRACKET(self):
            return self.getToken(CELParser.RPRACKET, 0)
        def LBRACKET(self):
            return self.getToken(CELParser.LBRACKET, 0)
        def expr(self):
            return self.getTypedRuleContext(CELParser.ExprContext,0)

        def QUESTIONMARK(self):
            return self.getToken(CELParser.QUESTIONMARK, 0)



    def member(self, _p:int=0):
        _parentctx = self._ctx
        _parentState = self.state
        localctx = CELParser.MemberContext(self, self._ctx, _parentState)
        _prevctx = localctx
        _startState = 14
        self.enterRecursionRule(localctx, 14, self.RULE_member, _p)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            localctx = CELParser.PrimaryExprContext(self, localctx)
            self._ctx = localctx
            _prevctx = localctx

            self.state = 102
            self.primary()
            self._ctx.stop = self._input.LT(-1)
            self.state = 128
            self._errHandler.sync(self)
            _alt = self._interp.adaptivePredict(self._input,13,self._ctx)
            while _alt!=2 and _alt!=ATN.INVALID_ALT_NUMBER:
                if _alt==1:
                    if self._parseListeners is not None:
                        self.triggerExitRuleEvent()
                    _prevctx = localctx
                    self.state = 126
                    self._errHandler.sync(self)
                    la_ = self._interp.adaptivePredict(self._input,12,self._ctx)
                    if la_ == 1:
                        localctx = CELParser.SelectContext(self, CELParser.MemberContext(self, _parentctx, _parentState))
                        self.pushNewRecursionContext(localctx, _startState, self.RULE_member)
                        self.state = 104
                        if not self.precpred(self._ctx, 3):
                            from antlr4.error.Errors import FailedPredicateException
                            raise FailedPredicateException(self, "self.precpred(self._ctx, 3)")
                        self.state = 105
                        localctx.op = self.match(CELParser.DOT)
                        self.state = 107
                        self._errHandler.sync(self)
                        _la = self._input.LA(1)
                        if _la==20:
                            self.state = 106
                            localctx.opt = self.match(CELParser.QUESTIONMARK)


                        self.state = 109
                        localctx.id_ = self.escapeIdent()
                        pass

                    elif la_ == 2:
                        localctx = CELParser.MemberCallContext(self, CELParser.MemberContext(self, _parentctx, _parentState))
                        self.pushNewRecursionContext(localctx, _startState, self.RULE_member)
                        self.state = 110
                        if not self.precpred(self._ctx, 2):
                            from antlr4.error.Errors import FailedPredicateException
                            raise FailedPredicateException(self, "self.precpred(self._ctx, 2)")
                        self.state = 111
                        localctx.op = self.match(CELParser.DOT)
                        self.state = 112
                        localctx.id_ = self.match(CELParser.IDENTIFIER)
                        self.state = 113
                        localctx.open_ = self.match(CELParser.LPAREN)
                        self.state = 115
                        self._errHandler.sync(self)
                        _la = self._input.LA(1)
                        if (((_la) & ~0x3f) == 0 and ((1 << _la) & 135762105344) != 0):
                            self.state = 114
                            localctx.args = self.exprList()


                        self.state = 117
                        self.match(CELParser.RPAREN)
                        pass

                    elif la_ == 3:
                        localctx = CELParser.IndexContext(self, CELParser.MemberContext(self, _parentctx, _parentState))
                        self.pushNewRecursionContext(localctx, _startState, self.RULE_member)
                        self.state = 118
                        if not self.precpred(self._ctx, 1):
                            from antlr4.error.Errors import FailedPredicateException
                            raise FailedPredicateException(self, "self.precpred(self._ctx, 1)")
                        self.state = 119
                        localctx.op = self.match(CELParser.LBRACKET)
                        self.state = 121
                        self._errHandler.sync(self)
                        _la = self._input.LA(1)
                        if _la==20:
                            self.state = 120
                            localctx.opt = self.match(CELParser.QUESTIONMARK)


                        self.state = 123
                        localctx.index = self.expr()
                        self.state = 124
                        self.match(CELParser.RPRACKET)
                        pass

             
                self.state = 130
                self._errHandler.sync(self)
                _alt = self._interp.adaptivePredict(self._input,13,self._ctx)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.unrollRecursionContexts(_parentctx)
        return localctx


    class PrimaryContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser


        def getRuleIndex(self):
            return CELParser.RULE_primary

     
        def copyFrom(self, ctx:ParserRuleContext):
            super().copyFrom(ctx)



    class CreateListContext(PrimaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.PrimaryContext
            super().__init__(parser)
            self.op = None # Token
            self.elems = None # ListInitContext
            self.copyFrom(ctx)

        def RPRACKET(self):
            return self.getToken(CELParser.RPRACKET, 0)
        def LBRACKET(self):
            return self.getToken(CELParser.LBRACKET, 0)
        def COMMA(self):
            return self.getToken(CELParser.COMMA, 0)
        def listInit(self):
            return self.getTypedRuleContext(CELParser.ListInitContext,0)



    class IdentContext(PrimaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.PrimaryContext
            super().__init__(parser)
            self.leadingDot = None # Token
            self.id_ = None # Token
            self.copyFrom(ctx)

        def IDENTIFIER(self):
            return self.getToken(CELParser.IDENTIFIER, 0)
        def DOT(self):
            return self.getToken(CELParser.DOT, 0)


    class CreateStructContext(PrimaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.PrimaryContext
            super().__init__(parser)
            self.op = None # Token
            self.entries = None # MapInitializerListContext
            self.copyFrom(ctx)

        def RBRACE(self):
            return self.getToken(CELParser.RBRACE, 0)
        def LBRACE(self):
            return self.getToken(CELParser.LBRACE, 0)
        def COMMA(self):
            return self.getToken(CELParser.COMMA, 0)
        def mapInitializerList(self):
            return self.getTypedRuleContext(CELParser.MapInitializerListContext,0)



    class ConstantLiteralContext(PrimaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.PrimaryContext
            super().__init__(parser)
            self.copyFrom(ctx)

        def literal(self):
            return self.getTypedRuleContext(CELParser.LiteralContext,0)



    class NestedContext(PrimaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.PrimaryContext
            super().__init__(parser)
            self.e = None # ExprContext
            self.copyFrom(ctx)

        def LPAREN(self):
            return self.getToken(CELParser.LPAREN, 0)
        def RPAREN(self):
            return self.getToken(CELParser.RPAREN, 0)
        def expr(self):
            return self.getTypedRuleContext(CELParser.ExprContext,0)



    class CreateMessageContext(PrimaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.PrimaryContext
            super().__init__(parser)
            self.leadingDot = None # Token
            self._IDENTIFIER = None # Token
            self.ids = list() # of Tokens
            self.s16 = None # Token
            self.ops = list() # of Tokens
            self.op = None # Token
            self.entries = None # FieldInitializerListContext
            self.copyFrom(ctx)

        def RBRACE(self):
            return self.getToken(CELParser.RBRACE, 0)
        def IDENTIFIER(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.IDENTIFIER)
            else:
                return self.getToken(CELParser.IDENTIFIER, i)
        def LBRACE(self):
            return self.getToken(CELParser.LBRACE, 0)
        def COMMA(self):
            return self.getToken(CELParser.COMMA, 0)
        def DOT(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.DOT)
            else:
                return self.getToken(CELParser.DOT, i)
        def fieldInitializerList(self):
            return self.getTypedRuleContext(CELParser.FieldInitializerListContext,0)



    class GlobalCallContext(PrimaryContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.PrimaryContext
            super().__init__(parser)
            self.leadingDot = None # Token
            self.id_ = None # Token
            self.op = None # Token
            self.args = None # ExprListContext
            self.copyFrom(ctx)

        def IDENTIFIER(self):
            return self.getToken(CELParser.IDENTIFIER, 0)
        def RPAREN(self):
            return self.getToken(CELParser.RPAREN, 0)
        def LPAREN(self):
            return self.getToken(CELParser.LPAREN, 0)
        def DOT(self):
            return self.getToken(CELParser.DOT, 0)
        def exprList(self):
            return self.getTypedRuleContext(CELParser.ExprListContext,0)




    def primary(self):

        localctx = CELParser.PrimaryContext(self, self._ctx, self.state)
        self.enterRule(localctx, 16, self.RULE_primary)
        self._la = 0 # Token type
        try:
            self.state = 184
            self._errHandler.sync(self)
            la_ = self._interp.adaptivePredict(self._input,25,self._ctx)
            if la_ == 1:
                localctx = CELParser.IdentContext(self, localctx)
                self.enterOuterAlt(localctx, 1)
                self.state = 132
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if _la==16:
                    self.state = 131
                    localctx.leadingDot = self.match(CELParser.DOT)


                self.state = 134
                localctx.id_ = self.match(CELParser.IDENTIFIER)
                pass

            elif la_ == 2:
                localctx = CELParser.GlobalCallContext(self, localctx)
                self.enterOuterAlt(localctx, 2)
                self.state = 136
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if _la==16:
                    self.state = 135
                    localctx.leadingDot = self.match(CELParser.DOT)


                self.state = 138
                localctx.id_ = self.match(CELParser.IDENTIFIER)

                self.state = 139
                localctx.op = self.match(CELParser.LPAREN)
                self.state = 141
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if (((_la) & ~0x3f) == 0 and ((1 << _la) & 135762105344) != 0):
                    self.state = 140
                    localctx.args = self.exprList()


                self.state = 143
                self.match(CELParser.RPAREN)
                pass

            elif la_ == 3:
                localctx = CELParser.NestedContext(self, localctx)
                self.enterOuterAlt(localctx, 3)
                self.state = 144
                self.match(CELParser.LPAREN)
                self.state = 145
                localctx.e = self.expr()
                self.state = 146
                self.match(CELParser.RPAREN)
                pass

            elif la_ == 4:
                localctx = CELParser.CreateListContext(self, localctx)
                self.enterOuterAlt(localctx, 4)
                self.state = 148
                localctx.op = self.match(CELParser.LBRACKET)
                self.state = 150
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if (((_la) & ~0x3f) == 0 and ((1 << _la) & 135763153920) != 0):
                    self.state = 149
                    localctx.elems = self.listInit()


                self.state = 153
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if _la==17:
                    self.state = 152
                    self.match(CELParser.COMMA)


                self.state = 155
                self.match(CELParser.RPRACKET)
                pass

            elif la_ == 5:
                localctx = CELParser.CreateStructContext(self, localctx)
                self.enterOuterAlt(localctx, 5)
                self.state = 156
                localctx.op = self.match(CELParser.LBRACE)
                self.state = 158
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if (((_la) & ~0x3f) == 0 and ((1 << _la) & 135763153920) != 0):
                    self.state = 157
                    localctx.entries = self.mapInitializerList()


                self.state = 161
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if _la==17:
                    self.state = 160
                    self.match(CELParser.COMMA)


                self.state = 163
                self.match(CELParser.RBRACE)
                pass

            elif la_ == 6:
                localctx = CELParser.CreateMessageContext(self, localctx)
                self.enterOuterAlt(localctx, 6)
                self.state = 165
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if _la==16:
                    self.state = 164
                    localctx.leadingDot = self.match(CELParser.DOT)


                self.state = 167
                localctx._IDENTIFIER = self.match(CELParser.IDENTIFIER)
                localctx.ids.append(localctx._IDENTIFIER)
                self.state = 172
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                while _la==16:
                    self.state = 168
                    localctx.s16 = self.match(CELParser.DOT)
                    localctx.ops.append(localctx.s16)
                    self.state = 169
                    localctx._IDENTIFIER = self.match(CELParser.IDENTIFIER)
                    localctx.ids.append(localctx._IDENTIFIER)
                    self.state = 174
                    self._errHandler.sync(self)
                    _la = self._input.LA(1)

                self.state = 175
                localctx.op = self.match(CELParser.LBRACE)
                self.state = 177
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if (((_la) & ~0x3f) == 0 and ((1 << _la) & 206159478784) != 0):
                    self.state = 176
                    localctx.entries = self.fieldInitializerList()


                self.state = 180
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if _la==17:
                    self.state = 179
                    self.match(CELParser.COMMA)


                self.state = 182
                self.match(CELParser.RBRACE)
                pass

            elif la_ == 7:
                localctx = CELParser.ConstantLiteralContext(self, localctx)
                self.enterOuterAlt(localctx, 7)
                self.state = 183
                self.literal()
                pass


        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class ExprListContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self._expr = None # ExprContext
            self.e = list() # of ExprContexts

        def expr(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.ExprContext)
            else:
                return self.getTypedRuleContext(CELParser.ExprContext,i)


        def COMMA(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.COMMA)
            else:
                return self.getToken(CELParser.COMMA, i)

        def getRuleIndex(self):
            return CELParser.RULE_exprList




    def exprList(self):

        localctx = CELParser.ExprListContext(self, self._ctx, self.state)
        self.enterRule(localctx, 18, self.RULE_exprList)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 186
            localctx._expr = self.expr()
            localctx.e.append(localctx._expr)
            self.state = 191
            self._errHandler.sync(self)
            _la = self._input.LA(1)
            while _la==17:
                self.state = 187
                self.match(CELParser.COMMA)
                self.state = 188
                localctx._expr = self.expr()
                localctx.e.append(localctx._expr)
                self.state = 193
                self._errHandler.sync(self)
                _la = self._input.LA(1)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class ListInitContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self._optExpr = None # OptExprContext
            self.elems = list() # of OptExprContexts

        def optExpr(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.OptExprContext)
            else:
                return self.getTypedRuleContext(CELParser.OptExprContext,i)


        def COMMA(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.COMMA)
            else:
                return self.getToken(CELParser.COMMA, i)

        def getRuleIndex(self):
            return CELParser.RULE_listInit




    def listInit(self):

        localctx = CELParser.ListInitContext(self, self._ctx, self.state)
        self.enterRule(localctx, 20, self.RULE_listInit)
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 194
            localctx._optExpr = self.optExpr()
            localctx.elems.append(localctx._optExpr)
            self.state = 199
            self._errHandler.sync(self)
            _alt = self._interp.adaptivePredict(self._input,27,self._ctx)
            while _alt!=2 and _alt!=ATN.INVALID_ALT_NUMBER:
                if _alt==1:
                    self.state = 195
                    self.match(CELParser.COMMA)
                    self.state = 196
                    localctx._optExpr = self.optExpr()
                    localctx.elems.append(localctx._optExpr) 
                self.state = 201
                self._errHandler.sync(self)
                _alt = self._interp.adaptivePredict(self._input,27,self._ctx)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class FieldInitializerListContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self._optField = None # OptFieldContext
            self.fields = list() # of OptFieldContexts
            self.s21 = None # Token
            self.cols = list() # of Tokens
            self._expr = None # ExprContext
            self.values = list() # of ExprContexts

        def optField(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.OptFieldContext)
            else:
                return self.getTypedRuleContext(CELParser.OptFieldContext,i)


        def COLON(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.COLON)
            else:
                return self.getToken(CELParser.COLON, i)

        def expr(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.ExprContext)
            else:
                return self.getTypedRuleContext(CELParser.ExprContext,i)


        def COMMA(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.COMMA)
            else:
                return self.getToken(CELParser.COMMA, i)

        def getRuleIndex(self):
            return CELParser.RULE_fieldInitializerList




    def fieldInitializerList(self):

        localctx = CELParser.FieldInitializerListContext(self, self._ctx, self.state)
        self.enterRule(localctx, 22, self.RULE_fieldInitializerList)
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 202
            localctx._optField = self.optField()
            localctx.fields.append(localctx._optField)
            self.state = 203
            localctx.s21 = self.match(CELParser.COLON)
            localctx.cols.append(localctx.s21)
            self.state = 204
            localctx._expr = self.expr()
            localctx.values.append(localctx._expr)
            self.state = 212
            self._errHandler.sync(self)
            _alt = self._interp.adaptivePredict(self._input,28,self._ctx)
            while _alt!=2 and _alt!=ATN.INVALID_ALT_NUMBER:
                if _alt==1:
                    self.state = 205
                    self.match(CELParser.COMMA)
                    self.state = 206
                    localctx._optField = self.optField()
                    localctx.fields.append(localctx._optField)
                    self.state = 207
                    localctx.s21 = self.match(CELParser.COLON)
                    localctx.cols.append(localctx.s21)
                    self.state = 208
                    localctx._expr = self.expr()
                    localctx.values.append(localctx._expr) 
                self.state = 214
                self._errHandler.sync(self)
                _alt = self._interp.adaptivePredict(self._input,28,self._ctx)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class OptFieldContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self.opt = None # Token

        def escapeIdent(self):
            return self.getTypedRuleContext(CELParser.EscapeIdentContext,0)


        def QUESTIONMARK(self):
            return self.getToken(CELParser.QUESTIONMARK, 0)

        def getRuleIndex(self):
            return CELParser.RULE_optField




    def optField(self):

        localctx = CELParser.OptFieldContext(self, self._ctx, self.state)
        self.enterRule(localctx, 24, self.RULE_optField)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 216
            self._errHandler.sync(self)
            _la = self._input.LA(1)
            if _la==20:
                self.state = 215
                localctx.opt = self.match(CELParser.QUESTIONMARK)


            self.state = 218
            self.escapeIdent()
        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class MapInitializerListContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self._optExpr = None # OptExprContext
            self.keys = list() # of OptExprContexts
            self.s21 = None # Token
            self.cols = list() # of Tokens
            self._expr = None # ExprContext
            self.values = list() # of ExprContexts

        def optExpr(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.OptExprContext)
            else:
                return self.getTypedRuleContext(CELParser.OptExprContext,i)


        def COLON(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.COLON)
            else:
                return self.getToken(CELParser.COLON, i)

        def expr(self, i:int=None):
            if i is None:
                return self.getTypedRuleContexts(CELParser.ExprContext)
            else:
                return self.getTypedRuleContext(CELParser.ExprContext,i)


        def COMMA(self, i:int=None):
            if i is None:
                return self.getTokens(CELParser.COMMA)
            else:
                return self.getToken(CELParser.COMMA, i)

        def getRuleIndex(self):
            return CELParser.RULE_mapInitializerList




    def mapInitializerList(self):

        localctx = CELParser.MapInitializerListContext(self, self._ctx, self.state)
        self.enterRule(localctx, 26, self.RULE_mapInitializerList)
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 220
            localctx._optExpr = self.optExpr()
            localctx.keys.append(localctx._optExpr)
            self.state = 221
            localctx.s21 = self.match(CELParser.COLON)
            localctx.cols.append(localctx.s21)
            self.state = 222
            localctx._expr = self.expr()
            localctx.values.append(localctx._expr)
            self.state = 230
            self._errHandler.sync(self)
            _alt = self._interp.adaptivePredict(self._input,30,self._ctx)
            while _alt!=2 and _alt!=ATN.INVALID_ALT_NUMBER:
                if _alt==1:
                    self.state = 223
                    self.match(CELParser.COMMA)
                    self.state = 224
                    localctx._optExpr = self.optExpr()
                    localctx.keys.append(localctx._optExpr)
                    self.state = 225
                    localctx.s21 = self.match(CELParser.COLON)
                    localctx.cols.append(localctx.s21)
                    self.state = 226
                    localctx._expr = self.expr()
                    localctx.values.append(localctx._expr) 
                self.state = 232
                self._errHandler.sync(self)
                _alt = self._interp.adaptivePredict(self._input,30,self._ctx)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class EscapeIdentContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser


        def getRuleIndex(self):
            return CELParser.RULE_escapeIdent

     
        def copyFrom(self, ctx:ParserRuleContext):
            super().copyFrom(ctx)



    class EscapedIdentifierContext(EscapeIdentContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.EscapeIdentContext
            super().__init__(parser)
            self.id_ = None # Token
            self.copyFrom(ctx)

        def ESC_IDENTIFIER(self):
            return self.getToken(CELParser.ESC_IDENTIFIER, 0)


    class SimpleIdentifierContext(EscapeIdentContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.EscapeIdentContext
            super().__init__(parser)
            self.id_ = None # Token
            self.copyFrom(ctx)

        def IDENTIFIER(self):
            return self.getToken(CELParser.IDENTIFIER, 0)



    def escapeIdent(self):

        localctx = CELParser.EscapeIdentContext(self, self._ctx, self.state)
        self.enterRule(localctx, 28, self.RULE_escapeIdent)
        try:
            self.state = 235
            self._errHandler.sync(self)
            token = self._input.LA(1)
            if token in [36]:
                localctx = CELParser.SimpleIdentifierContext(self, localctx)
                self.enterOuterAlt(localctx, 1)
                self.state = 233
                localctx.id_ = self.match(CELParser.IDENTIFIER)
                pass
            elif token in [37]:
                localctx = CELParser.EscapedIdentifierContext(self, localctx)
                self.enterOuterAlt(localctx, 2)
                self.state = 234
                localctx.id_ = self.match(CELParser.ESC_IDENTIFIER)
                pass
            else:
                raise NoViableAltException(self)

        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class OptExprContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser
            self.opt = None # Token
            self.e = None # ExprContext

        def expr(self):
            return self.getTypedRuleContext(CELParser.ExprContext,0)


        def QUESTIONMARK(self):
            return self.getToken(CELParser.QUESTIONMARK, 0)

        def getRuleIndex(self):
            return CELParser.RULE_optExpr




    def optExpr(self):

        localctx = CELParser.OptExprContext(self, self._ctx, self.state)
        self.enterRule(localctx, 30, self.RULE_optExpr)
        self._la = 0 # Token type
        try:
            self.enterOuterAlt(localctx, 1)
            self.state = 238
            self._errHandler.sync(self)
            _la = self._input.LA(1)
            if _la==20:
                self.state = 237
                localctx.opt = self.match(CELParser.QUESTIONMARK)


            self.state = 240
            localctx.e = self.expr()
        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx


    class LiteralContext(ParserRuleContext):
        __slots__ = 'parser'

        def __init__(self, parser, parent:ParserRuleContext=None, invokingState:int=-1):
            super().__init__(parent, invokingState)
            self.parser = parser


        def getRuleIndex(self):
            return CELParser.RULE_literal

     
        def copyFrom(self, ctx:ParserRuleContext):
            super().copyFrom(ctx)



    class BytesContext(LiteralContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.LiteralContext
            super().__init__(parser)
            self.tok = None # Token
            self.copyFrom(ctx)

        def BYTES(self):
            return self.getToken(CELParser.BYTES, 0)


    class UintContext(LiteralContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.LiteralContext
            super().__init__(parser)
            self.tok = None # Token
            self.copyFrom(ctx)

        def NUM_UINT(self):
            return self.getToken(CELParser.NUM_UINT, 0)


    class NullContext(LiteralContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.LiteralContext
            super().__init__(parser)
            self.tok = None # Token
            self.copyFrom(ctx)

        def NUL(self):
            return self.getToken(CELParser.NUL, 0)


    class BoolFalseContext(LiteralContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.LiteralContext
            super().__init__(parser)
            self.tok = None # Token
            self.copyFrom(ctx)

        def CEL_FALSE(self):
            return self.getToken(CELParser.CEL_FALSE, 0)


    class StringContext(LiteralContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.LiteralContext
            super().__init__(parser)
            self.tok = None # Token
            self.copyFrom(ctx)

        def STRING(self):
            return self.getToken(CELParser.STRING, 0)


    class DoubleContext(LiteralContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.LiteralContext
            super().__init__(parser)
            self.sign = None # Token
            self.tok = None # Token
            self.copyFrom(ctx)

        def NUM_FLOAT(self):
            return self.getToken(CELParser.NUM_FLOAT, 0)
        def MINUS(self):
            return self.getToken(CELParser.MINUS, 0)


    class BoolTrueContext(LiteralContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.LiteralContext
            super().__init__(parser)
            self.tok = None # Token
            self.copyFrom(ctx)

        def CEL_TRUE(self):
            return self.getToken(CELParser.CEL_TRUE, 0)


    class IntContext(LiteralContext):

        def __init__(self, parser, ctx:ParserRuleContext): # actually a CELParser.LiteralContext
            super().__init__(parser)
            self.sign = None # Token
            self.tok = None # Token
            self.copyFrom(ctx)

        def NUM_INT(self):
            return self.getToken(CELParser.NUM_INT, 0)
        def MINUS(self):
            return self.getToken(CELParser.MINUS, 0)



    def literal(self):

        localctx = CELParser.LiteralContext(self, self._ctx, self.state)
        self.enterRule(localctx, 32, self.RULE_literal)
        self._la = 0 # Token type
        try:
            self.state = 256
            self._errHandler.sync(self)
            la_ = self._interp.adaptivePredict(self._input,35,self._ctx)
            if la_ == 1:
                localctx = CELParser.IntContext(self, localctx)
                self.enterOuterAlt(localctx, 1)
                self.state = 243
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if _la==18:
                    self.state = 242
                    localctx.sign = self.match(CELParser.MINUS)


                self.state = 245
                localctx.tok = self.match(CELParser.NUM_INT)
                pass

            elif la_ == 2:
                localctx = CELParser.UintContext(self, localctx)
                self.enterOuterAlt(localctx, 2)
                self.state = 246
                localctx.tok = self.match(CELParser.NUM_UINT)
                pass

            elif la_ == 3:
                localctx = CELParser.DoubleContext(self, localctx)
                self.enterOuterAlt(localctx, 3)
                self.state = 248
                self._errHandler.sync(self)
                _la = self._input.LA(1)
                if _la==18:
                    self.state = 247
                    localctx.sign = self.match(CELParser.MINUS)


                self.state = 250
                localctx.tok = self.match(CELParser.NUM_FLOAT)
                pass

            elif la_ == 4:
                localctx = CELParser.StringContext(self, localctx)
                self.enterOuterAlt(localctx, 4)
                self.state = 251
                localctx.tok = self.match(CELParser.STRING)
                pass

            elif la_ == 5:
                localctx = CELParser.BytesContext(self, localctx)
                self.enterOuterAlt(localctx, 5)
                self.state = 252
                localctx.tok = self.match(CELParser.BYTES)
                pass

            elif la_ == 6:
                localctx = CELParser.BoolTrueContext(self, localctx)
                self.enterOuterAlt(localctx, 6)
                self.state = 253
                localctx.tok = self.match(CELParser.CEL_TRUE)
                pass

            elif la_ == 7:
                localctx = CELParser.BoolFalseContext(self, localctx)
                self.enterOuterAlt(localctx, 7)
                self.state = 254
                localctx.tok = self.match(CELParser.CEL_FALSE)
                pass

            elif la_ == 8:
                localctx = CELParser.NullContext(self, localctx)
                self.enterOuterAlt(localctx, 8)
                self.state = 255
                localctx.tok = self.match(CELParser.NUL)
                pass


        except RecognitionException as re:
            localctx.exception = re
            self._errHandler.reportError(self, re)
            self._errHandler.recover(self, re)
        finally:
            self.exitRule()
        return localctx



    def sempred(self, localctx:RuleContext, ruleIndex:int, predIndex:int):
        if self._predicates == None:
            self._predicates = dict()
        self._predicates[4] = self.relation_sempred
        self._predicates[5] = self.calc_sempred
        self._predicates[7] = self.member_sempred
        pred = self._predicates.get(ruleIndex, None)
        if pred is None:
            raise Exception("No predicate with index:" + str(ruleIndex))
        else:
            return pred(localctx, predIndex)

    def relation_sempred(self, localctx:RelationContext, predIndex:int):
            if predIndex == 0:
                return self.precpred(self._ctx, 1)
         

    def calc_sempred(self, localctx:CalcContext, predIndex:int):
            if predIndex == 1:
                return self.precpred(self._ctx, 2)
         

            if predIndex == 2:
                return self.precpred(self._ctx, 1)
         

    def member_sempred(self, localctx:MemberContext, predIndex:int):
            if predIndex == 3:
                return self.precpred(self._ctx, 3)
         

            if predIndex == 4:
                return self.precpred(self._ctx, 2)
         

            if predIndex == 5:
                return self.precpred(self._ctx, 1)
         




